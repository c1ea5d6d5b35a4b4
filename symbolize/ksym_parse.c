/* SPDX-License-Identifier: MIT */
/*
 * ksym_parse: reads one answer of the kernel's "%pS" format, as
 * sprint_symbol() writes it: "name+0xoff/0xsize", then " [module]" for a
 * loadable module's symbol; a bare "0x..." when no symbol holds the
 * address.
 */
#include <errno.h>
#include <string.h>

#include "sym_internal.h"

/* Parses "0x" and hex digits at @s (before @e) into *@v. Returns the end,
 * or NULL when there are none or more than 16. */
static const char *hex(const char *s, const char *e, uint64_t *v)
{
	if (e - s < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return NULL;
	uint64_t a = 0;
	const char *q = s + 2;
	for (; q < e; q++) {
		unsigned d;
		if (*q >= '0' && *q <= '9')
			d = (unsigned)(*q - '0');
		else if (*q >= 'a' && *q <= 'f')
			d = (unsigned)(*q - 'a' + 10);
		else if (*q >= 'A' && *q <= 'F')
			d = (unsigned)(*q - 'A' + 10);
		else
			break;
		if (q - s == 18)
			return NULL;
		a = a << 4 | d;
	}
	if (q == s + 2)
		return NULL;
	*v = a;
	return q;
}

/* Splits " [module]" off the end of [@s, *@e): sets the module and moves
 * *@e before it. Returns 0, or -EINVAL for a bracket without its pair. */
static int split_module(const char *s, const char **e,
			struct sym_ksym_rec *out)
{
	if (*e == s || (*e)[-1] != ']')
		return 0;
	const char *lb = *e - 1;
	while (lb > s && *lb != '[')
		lb--;
	/* " [name]" or " [name buildid]": the module is the first word */
	if (*lb != '[' || lb == s || lb[-1] != ' ' || lb + 2 > *e - 1)
		return -EINVAL;
	const char *m = lb + 1, *me = memchr(m, ' ', (size_t)(*e - 1 - m));
	out->module = m;
	out->module_len = (size_t)((me ? me : *e - 1) - m);
	if (out->module_len == 0)
		return -EINVAL;
	*e = lb - 1;
	return 0;
}

int sym_ksym_parse(const char *s, size_t len, struct sym_ksym_rec *out)
{
	const char *e = s + len;
	*out = (struct sym_ksym_rec){ 0 };
	if (len == 0 || memchr(s, '\0', len))
		return -EINVAL;
	int err = split_module(s, &e, out);
	if (err)
		return err;
	/* "+0xoff/0xsize" ends the name; a name holds no '+' of its own,
	 * but search from the right all the same */
	const char *plus = e;
	while (plus > s && plus[-1] != '+')
		plus--;
	if (plus == s) {
		uint64_t a;
		/* the bare address: no symbol */
		return !out->module && hex(s, e, &a) == e ? -ENOENT : -EINVAL;
	}
	const char *q = hex(plus, e, &out->off);
	if (!q || q == e || *q != '/' || hex(q + 1, e, &out->size) != e)
		return -EINVAL;
	out->name = s;
	out->name_len = (size_t)(plus - 1 - s);
	if (out->name_len == 0 || memchr(s, ' ', out->name_len))
		return -EINVAL;
	return 0;
}
