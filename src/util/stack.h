/* stack.h — the symbolized call stack shared by the walker, the symbolizer,
 * the recipe evaluator and the reports.
 *
 * Invariants:
 *  - frames[0] is the leaf (innermost), frames[nframes-1] the root.
 *  - One machine PC may expand to several frames: the inlined callees first
 *    (inlined == true), then the real function that contains them. All the
 *    frames of one PC share `pc`.
 *  - Strings are owned by whoever produced the stack (the symbolizer interns
 *    them for the life of the session), never freed by consumers.
 *  - linkage is the function's name as the object file knows it (the mangled
 *    symbol, or the plain C name), NULL when unknown; decl_line is the line
 *    where the function is declared (DW_AT_decl_line), 0 when unknown. They
 *    describe the function, not the PC, and are not part of a frame's
 *    identity (pprof's Function.system_name and start_line).
 *  - function is the name every output shows: for Rust the display name
 *    (demangle_display_name: "sled::tree::Tree::insert" for both legacy and
 *    v0 symbols), else the demangled name; NULL when unknown, then module + pc
 *    identify the frame. full_function is the demangled name without hash
 *    ("<sled::tree::Tree>::insert::<&[u8]>", as rustc-demangle's alternate
 *    form prints it) when it differs from function, else NULL. file is
 *    absolute where DWARF allows, NULL when unknown; line/column 0 when
 *    unknown.
 */
#ifndef XGDBPROF_STACK_H
#define XGDBPROF_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum frame_lang { FRAME_LANG_UNKNOWN, FRAME_LANG_RUST, FRAME_LANG_C, FRAME_LANG_CXX };

enum frame_source {      /* where the name/line came from, most precise first */
	FRAME_SOURCE_DWARF,
	FRAME_SOURCE_DEBUGLINK,  /* separate debug file found by build-id */
	FRAME_SOURCE_SYMTAB,
	FRAME_SOURCE_DYNSYM,
	FRAME_SOURCE_NONE,
};

struct frame {
	uint64_t pc;
	const char *function;
	const char *file;
	int line;
	int column;
	bool inlined;
	enum frame_lang lang;
	enum frame_source source;
	const char *module;      /* path of the ELF object holding pc */
	const char *linkage;     /* mangled (symbol) name, or NULL */
	int decl_line;           /* first line of the function, or 0 */
	const char *full_function; /* NULL: the same as function */
};

struct stack {
	size_t nframes;
	struct frame *frames;
};

/* The most machine frames a run walks per stack: the recipe's stack_depth
 * goes up to it, and the sampler and the tracer stop there (keeping the
 * leaf end). Symbolizing expands each into its inline chain, so a stack
 * may hold more frames than this (profile.h bounds what a reader keeps). */
#define STACK_MAX_MACHINE_FRAMES 1024

#endif
