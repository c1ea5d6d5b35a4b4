/* SPDX-License-Identifier: MIT */
/*
 * Classes and languages for frames of profiles from elsewhere: a pprof
 * written by Go's runtime/pprof or another tool, folded text hearth did
 * not write. hearth's own symbolizer knows the binaries (symbolize/);
 * here only what such a file holds is used: the function's name and its
 * source file's path. Pure code.
 */
#ifndef HEARTH_PROFILE_CLASSIFY_H
#define HEARTH_PROFILE_CLASSIFY_H

#include <stdint.h>

#include "profile.h"

/* The class (enum prof_class) of a frame named @name with source file
 * @file ("" when unknown), first match:
 *   - a language's standard library by its source's place: Go's under
 *     GOROOT (the file is GOROOT/src/ followed by the function's
 *     package, a standard one: no dot in its first element), Rust's
 *     (/rustc/HASH/library/), C++'s headers (/usr/include/c++/),
 *     Python's (/usr/lib/pythonX); runtime;
 *   - code fetched as a dependency: Go's module cache (/pkg/mod/), a
 *     vendor directory (/vendor/), Cargo's registry, node_modules,
 *     site-packages and dist-packages; library;
 *   - a runtime by name: Go's runtime ("runtime."), the C++ and Rust
 *     standard libraries ("std::", "core::", "alloc::", "__gnu_cxx::",
 *     "__cxa_"); runtime;
 *   - any other known source file: your code;
 *   - else PROF_CLASS_UNKNOWN. */
uint8_t prof_guess_class(const char *name, const char *file);

/* The language (enum prof_lang) of a frame named @name with source file
 * @file ("" when unknown): by the file's extension, else Go's runtime
 * or a C++ mangled name; PROF_LANG_UNKNOWN when neither says. */
uint8_t prof_guess_lang(const char *name, const char *file);

/* Fills the class and language of frame @f of profile @p (its strings
 * read from @p) that has none, as the two functions above guess them;
 * process and thread rows, and kernel frames, are left as they are. */
void prof_guess_frame(const struct prof_profile *p, struct prof_frame *f);

#endif /* HEARTH_PROFILE_CLASSIFY_H */
