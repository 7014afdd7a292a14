/* test_report_profiles.h — synthetic profiles for the report tests: a
 * sled-like cache service (the demo story) with known weights (100 samples
 * in all), and a small one whose names need XML/JSON escaping. Source paths
 * point into the source tree so --annotate reads real files. */
#ifndef TEST_REPORT_PROFILES_H
#define TEST_REPORT_PROFILES_H

#include "report/profile.h"
#include "symbols/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXE "/srv/cache-service"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define STD_THREAD "/rustc/0123456789abcdef0123456789abcdef01234567/library/std/src/sys/pal/unix/thread.rs"
#define STD_BT "/rustc/0123456789abcdef0123456789abcdef01234567/library/std/src/sys/backtrace.rs"

static char tree_rs[4096], service_rs[4096];

/* Display names made here, kept until release_display_names(). */
static char *display_names[64];
static size_t ndisplay_names;

/* The profiles hold their own copies: call once they are built. */
static void release_display_names(void)
{
	for (size_t i = 0; i < ndisplay_names; i++)
		free(display_names[i]);
	ndisplay_names = 0;
}

/* A frame as the symbolizer makes it: a Rust function given by its
 * demangled name gets its display name, the full one kept beside it. */
static struct frame F(const char *function, const char *file, int line, bool inlined,
		      enum frame_lang lang, const char *module, uint64_t pc)
{
	struct frame f = { .pc = pc, .function = function, .file = file, .line = line, .inlined = inlined,
			   .lang = lang, .source = file ? FRAME_SOURCE_DWARF : FRAME_SOURCE_DYNSYM, .module = module };
	if (lang == FRAME_LANG_RUST && function &&
	    ndisplay_names < sizeof display_names / sizeof display_names[0]) {
		char *shown = demangle_display_name(function);
		if (shown && strcmp(shown, function) != 0) {
			display_names[ndisplay_names++] = shown;
			f.function = shown;
			f.full_function = function;
		} else {
			free(shown);
		}
	}
	return f;
}

/* Adds a stack given root first (as people read it). */
static void add_root_first(struct profile *p, const char *thread, char state, uint64_t w,
			   size_t n, const struct frame *root_first)
{
	struct frame frames[32];
	struct xerr e;
	for (size_t i = 0; i < n; i++)
		frames[i] = root_first[n - 1 - i];
	struct stack s = { n, frames };
	if (profile_add(p, thread, state, &s, w, &e) < 0) {
		fprintf(stderr, "profile_add: %s\n", e.msg);
		exit(1);
	}
}

static void set_paths(const char *srcdir)
{
	snprintf(tree_rs, sizeof tree_rs, "%s/tests/report/sled_tree.rs", srcdir);
	snprintf(service_rs, sizeof service_rs, "%s/tests/fixtures/cache_service.rs", srcdir);
}

static struct profile *cache_service_profile(void)
{
	struct profile *p = profile_new();
	struct xerr e;
	struct profile_meta *m = &p->meta;
	m->exe = profile_intern(p, EXE);
	m->build_id = profile_intern(p, "5f0c9a1be2d3c4b5a6978812345678909abcdef0");
	m->pid = 4242;
	m->command_line = profile_intern(p, EXE " 60");
	m->recipe = profile_intern(p, "hot-cpu");
	m->thread_selection = profile_intern(p, "all");
	m->threads = 7;
	m->frequency_asked_hz = 99;
	m->frequency_achieved_hz = 41.25;
	m->duration_asked_s = 10;
	m->duration_actual_s = 10.02;
	m->samples = 413;
	m->thread_samples = 2891;
	m->stacks_reused = 1650;
	m->cpu_min_pct = 188;
	m->cpu_avg_pct = 196.5;
	m->cpu_max_pct = 200;
	m->stopped_pct = 4.6;
	m->stop_median_ms = 1.04;
	m->stop_p99_ms = 3.8;
	m->walker = profile_intern(p, "dwfl");
	m->stop_mode = profile_intern(p, "non-stop");
	m->version = profile_intern(p, "0.1.0");
	m->start_time = profile_intern(p, "2025-03-14T09:26:53Z");
	if (profile_add_note(p, "rate lowered from 99 Hz to 41 Hz to keep stopped time under 5%", &e) < 0)
		exit(1);

	const struct frame clone3 = F("clone3", NULL, 0, false, FRAME_LANG_C, LIBC, 0x7f0000001000);
	const struct frame start_thread = F("start_thread", NULL, 0, false, FRAME_LANG_C, LIBC, 0x7f0000002000);
	const struct frame thread_start = F("std::sys::pal::unix::thread::Thread::new::thread_start",
					    STD_THREAD, 105, false, FRAME_LANG_RUST, EXE, 0x5000);
	const struct frame call_once = F("core::ops::function::FnOnce::call_once{{vtable.shim}}",
					 "/rustc/0123456789abcdef0123456789abcdef01234567/library/core/src/ops/function.rs",
					 250, false, FRAME_LANG_RUST, EXE, 0x5100);
	const struct frame short_bt = F("std::sys::backtrace::__rust_begin_short_backtrace", STD_BT, 152,
					false, FRAME_LANG_RUST, EXE, 0x5200);
	const struct frame insert_worker = F("cache_service::insert_worker", service_rs, 33, false,
					     FRAME_LANG_RUST, EXE, 0x6000);
	const struct frame insert_worker_get = F("cache_service::insert_worker", service_rs, 34, false,
						 FRAME_LANG_RUST, EXE, 0x6010);
	const struct frame session_worker = F("cache_service::session_worker", service_rs, 49, false,
					      FRAME_LANG_RUST, EXE, 0x6100);
	const struct frame insert = F("sled::tree::Tree<K,V>::insert", tree_rs, 48, false,
				      FRAME_LANG_RUST, EXE, 0x7000);
	const struct frame get = F("sled::tree::Tree<K,V>::get", tree_rs, 67, false, FRAME_LANG_RUST, EXE, 0x7100);
	const struct frame view_39 = F("sled::tree::Tree<K,V>::view_for_key", tree_rs, 39, false,
				       FRAME_LANG_RUST, EXE, 0x7200);
	const struct frame view_37 = F("sled::tree::Tree<K,V>::view_for_key", tree_rs, 37, false,
				       FRAME_LANG_RUST, EXE, 0x7210);
	const struct frame below_leaf = F("sled::tree::below_leaf", tree_rs, 21, true, FRAME_LANG_RUST,
					  EXE, 0x7200);
	const struct frame drop_vec = F("<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop",
					"/rustc/0123456789abcdef0123456789abcdef01234567/library/alloc/src/vec/mod.rs",
					3850, false, FRAME_LANG_RUST, EXE, 0x8000);
	const struct frame unknown = F(NULL, NULL, 0, false, FRAME_LANG_UNKNOWN,
				       "/usr/lib/libmystery.so", 0x7f00dead0000);
	const struct frame conn_closure = F("cache_service::main::{{closure}}", service_rs, 75, false,
					    FRAME_LANG_RUST, EXE, 0x6200);
	const struct frame recv = F("std::sync::mpsc::Receiver<T>::recv",
				    "/rustc/0123456789abcdef0123456789abcdef01234567/library/std/src/sync/mpsc/mod.rs",
				    850, false, FRAME_LANG_RUST, EXE, 0x5300);
	const struct frame futex = F("syscall", NULL, 0, false, FRAME_LANG_C, LIBC, 0x7f0000003000);
	const struct frame libc_start = F("__libc_start_main", NULL, 0, false, FRAME_LANG_C, LIBC, 0x7f0000000100);
	const struct frame main_fn = F("cache_service::main", service_rs, 90, false, FRAME_LANG_RUST, EXE, 0x6300);
	const struct frame sleep = F("std::thread::sleep",
				     "/rustc/0123456789abcdef0123456789abcdef01234567/library/std/src/thread/mod.rs",
				     880, false, FRAME_LANG_RUST, EXE, 0x5400);
	const struct frame nanosleep = F("clock_nanosleep", NULL, 0, false, FRAME_LANG_C, LIBC, 0x7f0000004000);

	const struct frame a[] = { clone3, start_thread, thread_start, call_once, short_bt, insert_worker,
				   insert, view_39, below_leaf };
	add_root_first(p, "insert-worker", 'R', 30, 9, a);
	const struct frame b[] = { clone3, start_thread, thread_start, call_once, short_bt, insert_worker,
				   insert, view_37 };
	add_root_first(p, "insert-worker", 'R', 9, 8, b);
	const struct frame c[] = { clone3, start_thread, thread_start, call_once, short_bt, session_worker,
				   insert, view_39, below_leaf };
	add_root_first(p, "session-worker", 'R', 20, 9, c);
	const struct frame d[] = { clone3, start_thread, thread_start, call_once, short_bt, insert_worker_get,
				   get, view_39, below_leaf };
	add_root_first(p, "insert-worker", 'R', 10, 9, d);
	const struct frame g[] = { clone3, start_thread, thread_start, call_once, short_bt, session_worker,
				   drop_vec };
	add_root_first(p, "session-worker", 'R', 5, 7, g);
	const struct frame u[] = { clone3, start_thread, thread_start, call_once, short_bt, insert_worker,
				   unknown };
	add_root_first(p, "insert-worker", 'R', 1, 7, u);
	const struct frame conn[] = { clone3, start_thread, thread_start, call_once, short_bt, conn_closure,
				      recv, futex };
	add_root_first(p, "conn-0", 'S', 8, 8, conn);
	add_root_first(p, "conn-1", 'S', 7, 8, conn);
	const struct frame mn[] = { libc_start, main_fn, sleep, nanosleep };
	add_root_first(p, "cache-service", 'S', 4, 4, mn);
	add_root_first(p, "cache-service", 'R', 1, 4, mn);
	/* the same stack again: must merge into the first entry */
	add_root_first(p, "insert-worker", 'R', 5, 9, a);
	return p;
}

/* Names and paths that need escaping in XML, JSON and folded output. */
static struct profile *escaping_profile(void)
{
	struct profile *p = profile_new();
	p->meta.exe = profile_intern(p, "/tmp/a&b/<weird> \"exe\"");
	const struct frame root = F("main", "/src/it's here/main.rs", 3, false, FRAME_LANG_RUST, "/x", 1);
	const struct frame display = F("<&'static str as core::fmt::Display>::fmt", "/src/\"q\"&<t>.rs", 7,
				       false, FRAME_LANG_RUST, "/x", 2);
	const struct frame arr = F("<[u8; 16] as core::fmt::Debug>::fmt", "/src/a.rs", 9, true,
				   FRAME_LANG_RUST, "/x", 2);
	const struct frame cxx = F("std::vector<int, std::allocator<int> >::push_back(int const&)",
				   "/usr/include/c++/12/bits/stl_vector.h", 1281, false, FRAME_LANG_CXX, "/x", 3);
	const struct frame s1[] = { root, display, arr };
	add_root_first(p, "t<1>&\"", 'R', 3, 3, s1);
	const struct frame s2[] = { root, cxx };
	add_root_first(p, "t<1>&\"", 'R', 1, 2, s2);
	return p;
}

#endif
