/* recipe_lex.h — tokens of the recipe language.
 *
 * The lexer works on a byte buffer with explicit length (NUL bytes are just
 * bad characters). It reports malformed tokens into the diag_list and still
 * returns a token so the parser can go on and find more errors. `${NAME}` is
 * expanded inside strings and regexes, and stands for a string/number token
 * outside them, using the -D defines. Regex literals are context dependent
 * ('/' is also division), so the parser asks for them with recipe_lex_regex() right
 * after it consumed a '/' token.
 */
#ifndef XGDBPROF_RECIPE_LEX_H
#define XGDBPROF_RECIPE_LEX_H

#include <stdint.h>

#include "recipe/recipe.h"
#include "recipe/recipe_ast.h"
#include "recipe/recipe_diag.h"

enum tok_kind {
	TK_EOF = 0,
	TK_IDENT,      /* s: letters, digits, '_' and inner '.' (thread.id) */
	TK_INT,        /* i */
	TK_DURATION,   /* i: nanoseconds */
	TK_FREQ,       /* i: hertz (99hz) */
	TK_STRING,     /* s: escapes and ${} processed */
	TK_VAR,        /* s: $name without '$' */
	TK_MAP,        /* s: @name without '@' ("" for a bare '@') */
	TK_REGEX,      /* s: pattern (only from recipe_lex_regex) */
	TK_OP,         /* op: a character or an OP_* code */
	TK_ERROR,      /* a bad token, already reported */
};

struct token {
	enum tok_kind kind;
	struct loc loc;
	int op;
	int64_t i;
	char *s;       /* owned by the token; the parser steals it */
};

struct lexer {
	const struct recipe_src *src;
	size_t pos;
	const struct recipe_defines *defs;
	struct diag_list *diags;
};

void recipe_lexer_init(struct lexer *lx, const struct recipe_src *src,
		const struct recipe_defines *defs, struct diag_list *diags);
/* Next token; whitespace and comments (#, //, / * * /) are skipped. */
void recipe_lex_next(struct lexer *lx, struct token *t);
/* Scans a regex body from the current position up to the closing '/'
 * (`\/` stands for '/'). `start` is the offset of the opening '/'. */
void recipe_lex_regex(struct lexer *lx, size_t start, struct token *t);

/* Parses a duration literal like "500ms" (whole text). Returns 0 or -1. */
int recipe_lex_parse_duration(const char *text, int64_t *ns);

#endif
