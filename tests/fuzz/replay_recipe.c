/* replay_recipe.c — runs LLVMFuzzerTestOneInput on every file named on the
 * command line (directories are walked one level), so the fuzz corpus is
 * replayed by `make check` without libFuzzer. Exit 0 if nothing crashed.
 * Built with REPLAY_DEFAULT_CORPUS (a path under the source tree), no
 * argument means that corpus. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, rc = 0;
#ifdef REPLAY_DEFAULT_CORPUS
	/* Run by make check as a unit test (so CI runs it under ASan+UBSan
	 * and valgrind too): no argument replays the corpus under
	 * $TOP_SRCDIR. */
	char default_corpus[4096];
	char *default_argv[] = { argv[0], default_corpus, NULL };
	if (argc == 1) {
		const char *top = getenv("TOP_SRCDIR");
		snprintf(default_corpus, sizeof default_corpus, "%s/%s", top ? top : ".", REPLAY_DEFAULT_CORPUS);
		argc = 2;
		argv = default_argv;
	}
#endif
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			rc |= replay_file(argv[i]) < 0;
			files++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], de->d_name);
			rc |= replay_file(path) < 0;
			files++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", files);
	return rc || files == 0;
}
