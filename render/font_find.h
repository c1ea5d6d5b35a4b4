/* SPDX-License-Identifier: MIT */
/* render/font_find: which font file the viewer draws with. */
#ifndef HEARTH_RENDER_FONT_FIND_H
#define HEARTH_RENDER_FONT_FIND_H

#include <stdbool.h>
#include <stddef.h>

/* Writes to @path (size @len) the file of the font fontconfig gives for
 * @family (a fontconfig family or pattern; NULL or "": sans-serif), @bold
 * or regular, when it is scalable; otherwise, when fontconfig knows no
 * such font, the DejaVu Sans file in @fallback_dir. Returns true when
 * fontconfig found it, false for the fallback. */
bool rd_font_find(const char *family, bool bold, const char *fallback_dir,
		  char *path, size_t len);

#endif
