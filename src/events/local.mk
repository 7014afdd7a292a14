## events/: the one event stream the producers (stacks, trace) hand to the
## consumer (a recipe run, wired by cli), the probe specs they arm, the
## shared run stats and notes, and the stop budget. Uses util only.
noinst_LIBRARIES += src/events/libevents.a
src_events_libevents_a_CPPFLAGS = $(NO_GDB_CPPFLAGS)
src_events_libevents_a_SOURCES = \
	src/events/event.c \
	src/events/event.h \
	src/events/run_stats.c \
	src/events/run_stats.h \
	src/events/stop_budget.c \
	src/events/stop_budget.h

check_PROGRAMS += tests/unit/test_events
tests_unit_test_events_SOURCES = tests/unit/test_events.c
tests_unit_test_events_LDADD = $(events_ldadd)
TESTS += tests/unit/test_events
