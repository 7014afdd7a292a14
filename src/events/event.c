#include "events/event.h"

const char *probe_kind_name(enum probe_kind k)
{
	static const char *const names[] = {
		"begin", "end", "sample", "interval", "function", "return", "panic", "syscall", "syscall_entry",
		"syscall_site",
	};
	return (size_t)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

bool probe_kind_traced(enum probe_kind k)
{
	switch (k) {
	case PROBE_FUNCTION:
	case PROBE_RETURN:
	case PROBE_PANIC:
	case PROBE_SYSCALL:
	case PROBE_SYSCALL_ENTRY:
	case PROBE_SYSCALL_SITE:
		return true;
	default:
		return false;
	}
}
