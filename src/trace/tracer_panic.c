/* tracer_panic.c — panic payloads and locations read from the target. */
#include "trace/tracer_internal.h"

/* ---- panics --------------------------------------------------------------- */

bool tracer_valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		if (!len || i + len > n)
			return false;
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
		i += len;
	}
	return true;
}

/* Reads len bytes of UTF-8 text at addr into a malloc'd string, or NULL. */
static char *read_text(struct tracer *t, uint64_t addr, uint64_t len)
{
	if (addr < 4096 || len > (1u << 20))
		return NULL;
	char *buf = malloc(len + 1);
	if (!buf)
		return NULL;
	if (tracer_read_mem(t, addr, buf, len) < 0 || !tracer_valid_utf8((unsigned char *)buf, len)) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* A std panic payload is `&mut dyn PanicPayload`: its vtable's second word
 * is the concrete type's size. 16 bytes: a &str (StaticStrPayload, or
 * begin_panic's Payload<&str> = Option<&str>). 24 or 32: a String (its
 * Option, alone or after the &fmt::Arguments of FormatStringPayload),
 * formatted by std when it built the hook's info, i.e. before rust_panic
 * and before an abort. Field order is not fixed by Rust, so the String's
 * (cap, ptr, len) words are found by trying each placement, the layout of
 * rustc 1.95 first. Nothing is called in the target. */
char *tracer_payload_message(struct tracer *t, uint64_t data, uint64_t vtable)
{
	bool ok;
	uint64_t size = tracer_read_word(t, vtable + 8, &ok);
	if (!ok || data < 4096)
		return NULL;
	uint64_t w[4];
	if (size == 16) {
		if (tracer_read_mem(t, data, w, 16) < 0)
			return NULL;
		if (w[0] == 0)
			return strdup("(payload already taken)");
		return read_text(t, w[0], w[1]);
	}
	if (size != 24 && size != 32)
		return strdup("Box<dyn Any>");
	size_t nw = (size_t)size / 8;
	if (tracer_read_mem(t, data, w, (size_t)size) < 0)
		return NULL;
	static const int orders[][3] = {
		/* cap, ptr, len */
		{ 0, 1, 2 }, { 1, 0, 2 }, { 1, 2, 3 }, { 2, 1, 3 }, { 0, 2, 1 }, { 2, 0, 1 },
		{ 1, 3, 2 }, { 3, 1, 2 }, { 2, 3, 1 }, { 3, 2, 1 }, { 0, 1, 3 }, { 1, 0, 3 },
		{ 0, 3, 1 }, { 3, 0, 1 }, { 0, 2, 3 }, { 2, 0, 3 }, { 0, 3, 2 }, { 3, 0, 2 },
	};
	for (size_t o = 0; o < sizeof orders / sizeof *orders; o++) {
		int c = orders[o][0], p = orders[o][1], l = orders[o][2];
		if ((size_t)c >= nw || (size_t)p >= nw || (size_t)l >= nw)
			continue;
		if (w[c] > (1ull << 40) || w[l] > w[c])
			continue;
		if (w[l] == 0)
			return strdup("");
		char *text = read_text(t, w[p], w[l]);
		if (text)
			return text;
	}
	return NULL;
}

/* core::panic::Location: { file: &str, line: u32, col: u32 }. */
bool tracer_read_location(struct tracer *t, uint64_t addr, char *out, size_t size)
{
	uint64_t w[3];
	if (addr < 4096 || tracer_read_mem(t, addr, w, sizeof w) < 0 || w[1] == 0 || w[1] > 4096)
		return false;
	char *file = read_text(t, w[0], w[1]);
	if (!file)
		return false;
	uint32_t line = (uint32_t)w[2], col = (uint32_t)(w[2] >> 32);
	bool ok = line > 0 && line < 10000000 && col < 100000;
	if (ok)
		snprintf(out, size, "%s:%u:%u", file, line, col);
	free(file);
	return ok;
}

