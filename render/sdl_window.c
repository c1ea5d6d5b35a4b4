/* SPDX-License-Identifier: MIT */
/* The viewer window: SDL events in, ui state changes, draw list out.
 * Redraws only after input or a resize (SDL_WaitEvent, no busy loop). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "render/sdl.h"
#include "render/sdl_draw.h"
#include "render/ui.h"

struct win {
	SDL_Window *w;
	SDL_Renderer *r;
	struct rd_fonts *fonts;
	struct rd_ui ui;
	double scale; /* drawable pixels per window coordinate */
	double ui_scale; /* metrics: scale, or HEARTH_SCALE where the window
			  * system does not report HiDPI (X11) */
	const struct rd_window_opts *o;
	Uint32 wake_type; /* SDL event a view's thread posts for new data */
};

/* Called from a view's thread (live data): wakes SDL_WaitEvent. */
static void wake(void *arg)
{
	struct win *v = arg;
	SDL_Event e = { 0 };

	e.type = v->wake_type;
	SDL_PushEvent(&e);
}

static void dump(struct win *v)
{
	char tmp[4096];
	FILE *f;

	if (!v->o->debug_layout)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", v->o->debug_layout);
	f = fopen(tmp, "w");
	if (!f)
		return;
	rd_ui_dump(&v->ui, f);
	if (fclose(f) == 0)
		rename(tmp, v->o->debug_layout);
}

static int redraw(struct win *v)
{
	int ww, wh, dw, dh;

	SDL_GetWindowSize(v->w, &ww, &wh);
	if (SDL_GetRendererOutputSize(v->r, &dw, &dh) < 0)
		dw = ww, dh = wh;
	if (rd_ui_layout(&v->ui, dw, dh, v->ui_scale) < 0)
		return -ENOMEM;
	rd_sdl_draw(v->r, v->fonts, &v->ui.list);
	SDL_RenderPresent(v->r);
	dump(v);
	return 0;
}

static int key(struct win *v, const SDL_KeyboardEvent *k)
{
	switch (k->keysym.sym) {
	case SDLK_UP: return rd_ui_key(&v->ui, RD_KEY_UP);
	case SDLK_DOWN: return rd_ui_key(&v->ui, RD_KEY_DOWN);
	case SDLK_LEFT: return rd_ui_key(&v->ui, RD_KEY_LEFT);
	case SDLK_RIGHT: return rd_ui_key(&v->ui, RD_KEY_RIGHT);
	case SDLK_RETURN:
	case SDLK_KP_ENTER: return rd_ui_key(&v->ui, RD_KEY_ENTER);
	case SDLK_ESCAPE: return rd_ui_key(&v->ui, RD_KEY_ESCAPE);
	case SDLK_BACKSPACE: return rd_ui_key(&v->ui, RD_KEY_BACKSPACE);
	default: return 0;
	}
}

/* Returns 1 to redraw, 0 not, -1 to quit. */
static int handle(struct win *v, const SDL_Event *e)
{
	int s = 0;

	if (v->wake_type != (Uint32)-1 && e->type == v->wake_type)
		return rd_ui_update(&v->ui);
	switch (e->type) {
	case SDL_QUIT:
		return -1;
	case SDL_WINDOWEVENT:
		if (e->window.event == SDL_WINDOWEVENT_LEAVE)
			return rd_ui_leave(&v->ui);
		return e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED ||
		       e->window.event == SDL_WINDOWEVENT_EXPOSED ||
		       e->window.event == SDL_WINDOWEVENT_RESIZED;
	case SDL_MOUSEMOTION:
		/* A release outside the window is never delivered. */
		if (v->ui.dragging && !(e->motion.state & SDL_BUTTON_LMASK))
			rd_ui_release_button(&v->ui);
		return rd_ui_motion(&v->ui, (int)(e->motion.x * v->scale),
				    (int)(e->motion.y * v->scale));
	case SDL_MOUSEBUTTONDOWN:
		if (e->button.button != SDL_BUTTON_LEFT)
			return 0;
		s = rd_ui_click(&v->ui, (int)(e->button.x * v->scale),
				(int)(e->button.y * v->scale));
		if (s && v->ui.typing)
			SDL_StartTextInput();
		return s;
	case SDL_MOUSEBUTTONUP:
		return rd_ui_release_button(&v->ui);
	case SDL_MOUSEWHEEL: {
		int mx, my;

		SDL_GetMouseState(&mx, &my);
		return rd_ui_wheel(&v->ui, (int)(mx * v->scale), (int)(my * v->scale),
				   e->wheel.y);
	}
	case SDL_KEYDOWN:
		s = key(v, &e->key);
		if (!v->ui.typing && e->key.keysym.sym == SDLK_q &&
		    !(e->key.keysym.mod & KMOD_CTRL))
			return -1;
		return s;
	case SDL_TEXTINPUT:
		return rd_ui_text(&v->ui, e->text.text);
	default:
		return 0;
	}
}

static void update_scale(struct win *v)
{
	const char *env = getenv("HEARTH_SCALE");
	char *end = NULL;
	double forced = env ? strtod(env, &end) : 0;
	int ww, wh, dw, dh;

	SDL_GetWindowSize(v->w, &ww, &wh);
	if (SDL_GetRendererOutputSize(v->r, &dw, &dh) < 0 || ww <= 0)
		dw = ww;
	v->scale = ww > 0 ? (double)dw / ww : 1;
	if (v->scale < 1)
		v->scale = 1;
	v->ui_scale = v->scale;
	if (env && end != env && !*end && forced >= 1 && forced <= 4)
		v->ui_scale = forced;
}

static int loop(struct win *v)
{
	SDL_Event e;

	SDL_StartTextInput();
	if (redraw(v) < 0)
		return -ENOMEM;
	while (SDL_WaitEvent(&e)) {
		int r = handle(v, &e), dirty = r > 0;

		while (r >= 0 && SDL_PollEvent(&e)) {
			r = handle(v, &e);
			dirty |= r > 0;
		}
		if (r < 0)
			return 0;
		if (dirty && redraw(v) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int has_display(void)
{
	const char *d = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");

	return (d && *d) || (w && *w);
}

/* The size asked for, else 1280x800 that fits the screen's usable area. */
static void initial_size(const struct rd_window_opts *o, int *w, int *h)
{
	SDL_Rect r;

	*w = o->width ? o->width : 1280;
	*h = o->height ? o->height : 800;
	if (o->width || SDL_GetDisplayUsableBounds(0, &r) < 0)
		return;
	if (*w > r.w * 9 / 10)
		*w = r.w * 9 / 10;
	if (*h > r.h * 9 / 10)
		*h = r.h * 9 / 10;
	if (*w < 400)
		*w = 400;
	if (*h < 300)
		*h = 300;
}

int rd_window_run(struct rd_model *m, const struct rd_window_opts *o,
		  char *err, size_t errlen)
{
	int ww, wh;
	struct win v = { .o = o, .scale = 1, .ui_scale = 1 };
	struct rd_text t;
	int rc = -EIO;

	if (!has_display()) {
		snprintf(err, errlen, "there is no display to open a window on "
			 "(DISPLAY is not set); 'hearth export --svg -o out.svg FILE' "
			 "writes a flame graph to open in a browser");
		return -ENODEV;
	}
	SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0");
	/* An X display and no Wayland one: go straight to X11 rather than
	 * probe Wayland (which complains on stderr) first. */
	if (getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY") &&
	    !getenv("SDL_VIDEODRIVER"))
		SDL_SetHint(SDL_HINT_VIDEODRIVER, "x11");
	if (SDL_Init(SDL_INIT_VIDEO) < 0) {
		const char *d = getenv("DISPLAY");
		snprintf(err, errlen, "cannot open a window on display %s (%s); "
			 "'hearth export --svg' works without one",
			 d ? d : getenv("WAYLAND_DISPLAY"), SDL_GetError());
		return -ENODEV;
	}
	/* With no display it can reach, SDL falls back to drivers that draw
	 * into memory: the viewer would run with no window anyone can see. */
	const char *drv = SDL_GetCurrentVideoDriver();
	if (drv && !getenv("SDL_VIDEODRIVER") &&
	    (!strcmp(drv, "offscreen") || !strcmp(drv, "dummy") ||
	     !strcmp(drv, "evdev"))) {
		snprintf(err, errlen, "cannot open a window on display %s (it "
			 "refused the connection); 'hearth export --svg' works "
			 "without one", getenv("DISPLAY") ? getenv("DISPLAY") : "(unset)");
		SDL_Quit();
		return -ENODEV;
	}
	initial_size(o, &ww, &wh);
	v.w = SDL_CreateWindow(o->title ? o->title : "hearth", SDL_WINDOWPOS_CENTERED,
			       SDL_WINDOWPOS_CENTERED, ww, wh,
			       SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
	if (!v.w || !(v.r = SDL_CreateRenderer(v.w, -1, 0))) {
		snprintf(err, errlen, "cannot create the window: %s", SDL_GetError());
		goto out;
	}
	update_scale(&v);
	if (!(v.fonts = rd_fonts_new(v.r, v.ui_scale, err, errlen)))
		goto out;
	t = rd_fonts_text(v.fonts);
	if (rd_ui_init(&v.ui, m, &t) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (o->query)
		rd_ui_set_query(&v.ui, o->query);
	v.wake_type = SDL_RegisterEvents(1);
	if ((rc = rd_ui_attach(&v.ui, &o->panes, wake, &v)) < 0) {
		snprintf(err, errlen, "cannot start the view: %s", strerror(-rc));
		rd_ui_release(&v.ui);
		goto out;
	}
	rc = loop(&v);
	if (rc < 0)
		snprintf(err, errlen, "out of memory while drawing");
	rd_ui_detach(&v.ui);
	rd_ui_release(&v.ui);
out:
	rd_fonts_free(v.fonts);
	if (v.r)
		SDL_DestroyRenderer(v.r);
	if (v.w)
		SDL_DestroyWindow(v.w);
	SDL_Quit();
	return rc;
}
