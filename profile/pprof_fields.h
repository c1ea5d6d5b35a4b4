/* SPDX-License-Identifier: MIT */
/*
 * Field numbers of profile.proto (github.com/google/pprof), shared by the
 * pprof reader and writer, and hearth's own extension fields. Extension
 * fields use numbers far above the format's, so other readers skip them.
 */
#ifndef HEARTH_PPROF_FIELDS_H
#define HEARTH_PPROF_FIELDS_H

enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	PROFILE_HEARTH_DROPS = 5001, /* hearth: samples the sampler lost */
	PROFILE_HEARTH_ATTRS = 5002, /* hearth: 1 = functions carry 5001.. */

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_HEARTH_KIND = 5001,  /* hearth: enum prof_frame_kind */
	FUNCTION_HEARTH_CLASS = 5002, /* hearth: enum prof_class */
	FUNCTION_HEARTH_LANG = 5003,  /* hearth: enum prof_lang */
};

/* Sample label keys for hearth's process and thread rows. */
#define PPROF_LABEL_PROCESS "process"
#define PPROF_LABEL_THREAD "thread"

#endif /* HEARTH_PPROF_FIELDS_H */
