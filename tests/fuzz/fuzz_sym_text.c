/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the text parsers of symbolize/: /proc/PID/maps lines, perf map
 * files and kallsyms. The first byte picks the parser.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbolize/sym_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	switch (data[0] % 3) {
	case 0: {
		struct sym_maps_line ml;
		if (sym_maps_parse_line(text, len, &ml) == 0) {
			/* the path points inside the input */
			if (ml.path_len > 0 &&
			    (ml.path < text || ml.path + ml.path_len > text + len))
				__builtin_trap();
			if (ml.end < ml.start)
				__builtin_trap();
		}
		break;
	}
	case 1: {
		struct sym_perfmap *pm = sym_perfmap_new();
		if (pm && sym_perfmap_parse(pm, text, len) == 0) {
			for (uint64_t a = 0; a < 4096; a += 509)
				(void)sym_perfmap_find(pm, a);
		}
		sym_perfmap_free(pm);
		break;
	}
	default: {
		struct sym_kallsyms *k = sym_kallsyms_parse(text, len);
		if (k) {
			const char *name, *mod;
			uint64_t probe = 0xffffffff81000000ull;
			for (int i = 0; i < 16; i++, probe += 0x1000)
				if (sym_kallsyms_find(k, probe, &name, &mod) == 0 &&
				    !name)
					__builtin_trap();
		}
		sym_kallsyms_free(k);
		break;
	}
	}
	return 0;
}
