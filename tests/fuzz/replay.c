/* replay.c — runs a libFuzzer target over saved inputs, without libFuzzer.
 *
 * Link it with any file defining LLVMFuzzerTestOneInput (and, optionally,
 * LLVMFuzzerInitialize) and run:
 *     replay_TARGET FILE_OR_DIR...
 * Each file is read whole and passed once; directories are walked (one level
 * deep is enough for libFuzzer corpora, but subdirectories are followed too).
 * Exits 0 when every input ran, 1 if an argument cannot be read or none was
 * given. A crash or sanitizer report in the target fails the test by itself.
 * Built with REPLAY_DEFAULT_CORPUS (a path under the source tree), no
 * argument means $TOP_SRCDIR/that path: make check can then run it as a unit
 * test, which CI runs under ASan+UBSan and valgrind too.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long inputs_run;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t size = 0, capacity = 4096;
	uint8_t *data = malloc(capacity);
	size_t n;
	while (data && (n = fread(data + size, 1, capacity - size, f)) > 0) {
		size += n;
		if (size == capacity) {
			uint8_t *grown = realloc(data, capacity *= 2);
			if (!grown) {
				free(data);
				data = NULL;
				break;
			}
			data = grown;
		}
	}
	int failed = ferror(f) || !data;
	fclose(f);
	if (failed) {
		free(data);
		fprintf(stderr, "replay: cannot read %s\n", path);
		return -1;
	}
	/* An exact-size copy so an overread of the input is caught by ASan. */
	uint8_t *exact = malloc(size ? size : 1);
	if (!exact) {
		free(data);
		return -1;
	}
	memcpy(exact, data, size);
	free(data);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	inputs_run++;
	return 0;
}

static int replay_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	struct dirent **entries;
	int n = scandir(path, &entries, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: cannot list %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		const char *name = entries[i]->d_name;
		if (name[0] != '.') {
			size_t len = strlen(path) + strlen(name) + 2;
			char *child = malloc(len);
			if (!child || snprintf(child, len, "%s/%s", path, name) < 0 ||
			    replay_path(child) < 0)
				rc = -1;
			free(child);
		}
		free(entries[i]);
	}
	free(entries);
	return rc;
}

int main(int argc, char **argv)
{
#ifdef REPLAY_DEFAULT_CORPUS
	char corpus[4096];
	char *with_corpus[] = { argv[0], corpus, NULL };
	if (argc == 1) {
		const char *top = getenv("TOP_SRCDIR");
		snprintf(corpus, sizeof corpus, "%s/%s", top ? top : ".", REPLAY_DEFAULT_CORPUS);
		argc = 2;
		argv = with_corpus;
	}
#endif
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
		return 1;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	int rc = 0;
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i]) < 0)
			rc = 1;
	printf("replay: %lu input(s) run\n", inputs_run);
	return rc == 0 && inputs_run > 0 ? 0 : 1;
}
