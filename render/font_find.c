/* SPDX-License-Identifier: MIT */
/* Which font file the viewer draws with: fontconfig's answer for the
 * family asked (sans-serif by default, so the desktop's choice), else
 * DejaVu Sans. */
#include <stdio.h>
#include <string.h>

#include <fontconfig/fontconfig.h>

#include "render/font_find.h"

/* The file fontconfig matches for @family and @bold, or false. A private
 * configuration, destroyed after, so no state is left behind. */
static bool fc_find(const char *family, bool bold, char *path, size_t len)
{
	FcConfig *cfg = FcInitLoadConfigAndFonts();
	FcPattern *pat = NULL, *match = NULL;
	FcChar8 *file = NULL;
	FcBool scalable = FcFalse;
	FcResult res;
	bool found = false;

	if (!cfg)
		return false;
	pat = FcNameParse((const FcChar8 *)(family && *family ? family : "sans-serif"));
	if (!pat)
		goto out;
	FcPatternAddInteger(pat, FC_WEIGHT, bold ? FC_WEIGHT_BOLD : FC_WEIGHT_REGULAR);
	FcPatternAddInteger(pat, FC_SLANT, FC_SLANT_ROMAN);
	FcConfigSubstitute(cfg, pat, FcMatchPattern);
	FcDefaultSubstitute(pat);
	match = FcFontMatch(cfg, pat, &res);
	if (!match || FcPatternGetString(match, FC_FILE, 0, &file) != FcResultMatch ||
	    FcPatternGetBool(match, FC_SCALABLE, 0, &scalable) != FcResultMatch || !scalable)
		goto out;
	found = (size_t)snprintf(path, len, "%s", (const char *)file) < len;
out:
	if (match)
		FcPatternDestroy(match);
	if (pat)
		FcPatternDestroy(pat);
	FcConfigDestroy(cfg);
	return found;
}

bool rd_font_find(const char *family, bool bold, const char *fallback_dir,
		  char *path, size_t len)
{
	if (fc_find(family, bold, path, len))
		return true;
	snprintf(path, len, "%s/%s", fallback_dir, bold ? "DejaVuSans-Bold.ttf" : "DejaVuSans.ttf");
	return false;
}
