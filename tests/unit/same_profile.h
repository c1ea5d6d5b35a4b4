/* SPDX-License-Identifier: MIT */
/*
 * A check shared by the folded reader's tests: two profiles read from the
 * same text must hold the same strings and frames (ids, names, kinds) and,
 * sorted, the same tree. Include after cmocka.h and profile/profile.h.
 */
#ifndef HEARTH_TEST_SAME_PROFILE_H
#define HEARTH_TEST_SAME_PROFILE_H

/* Same strings, frames and, after sorting, the same tree: a walk down
 * both meets the same frames (by id), totals and selves in the same
 * order, with the same children and siblings. */
static void assert_same_profile(struct prof_profile *a, struct prof_profile *b)
{
	uint32_t x = 0, y = 0, seen = 0;

	assert_int_equal(prof_str_count(a), prof_str_count(b));
	for (uint32_t i = 0; i < prof_str_count(a); i++) {
		assert_int_equal(prof_str_len(a, i), prof_str_len(b, i));
		assert_memory_equal(prof_str(a, i), prof_str(b, i), prof_str_len(a, i));
	}
	assert_int_equal(prof_frame_count(a), prof_frame_count(b));
	for (uint32_t i = 1; i < prof_frame_count(a); i++) {
		const struct prof_frame *f = prof_frame_get(a, i);
		const struct prof_frame *g = prof_frame_get(b, i);

		assert_int_equal(f->name, g->name);
		assert_int_equal(f->kind, g->kind);
	}
	assert_int_equal(prof_sort(a), 0);
	assert_int_equal(prof_sort(b), 0);
	assert_int_equal(prof_node_count(a), prof_node_count(b));
	for (;;) {
		const struct prof_node *u = prof_node_get(a, x);
		const struct prof_node *v = prof_node_get(b, y);

		seen++;
		assert_int_equal(u->frame, v->frame);
		assert_true(u->total == v->total);
		assert_true(u->self == v->self);
		assert_int_equal(u->child == 0, v->child == 0);
		assert_int_equal(u->sibling == 0, v->sibling == 0);
		if (u->child) {
			x = u->child;
			y = v->child;
			continue;
		}
		while (x && !prof_node_get(a, x)->sibling) {
			assert_int_equal(prof_node_get(b, y)->sibling, 0);
			x = prof_node_get(a, x)->parent;
			y = prof_node_get(b, y)->parent;
		}
		assert_int_equal(x == 0, y == 0);
		if (!x)
			break;
		x = prof_node_get(a, x)->sibling;
		y = prof_node_get(b, y)->sibling;
	}
	assert_int_equal(seen, prof_node_count(a));
}

#endif /* HEARTH_TEST_SAME_PROFILE_H */
