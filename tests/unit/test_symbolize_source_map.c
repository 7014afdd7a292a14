/* Unit tests of src/symbols/source_map.c: prefix rules and rust-src discovery (with a
 * fake rustc script, so no Rust installation is needed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/source_map.h"
#include "check.h"



static void expect_map(struct source_map *m, const char *in, const char *want)
{
	char *got = source_map_apply(m, in);
	if ((got == NULL) != (want == NULL) || (got && strcmp(got, want) != 0)) {
		fprintf(stderr, "map(%s): got %s, want %s\n", in, got ? got : "(none)",
			want ? want : "(none)");
		test_failures++;
	}
	free(got);
}

static void test_rules(void)
{
	struct source_map *m = source_map_new();
	struct xerr err;
	source_map_set_rustc(m, NULL);
	CHECK(!source_map_active(m));
	expect_map(m, "/build/a.c", NULL);

	CHECK(source_map_add_spec(m, "/build=/home/me/src", &err) == 0);
	CHECK(source_map_add_spec(m, "/build/vendor/=/opt/vendor/", &err) == 0);
	CHECK(source_map_active(m));
	expect_map(m, "/build/a.c", "/home/me/src/a.c");
	expect_map(m, "/build", "/home/me/src");
	expect_map(m, "/buildbot/a.c", NULL);              /* whole components only */
	expect_map(m, "/build/vendor/x/y.rs", "/opt/vendor/x/y.rs"); /* longest wins */
	expect_map(m, "/build/vendorx/y.rs", "/home/me/src/vendorx/y.rs");
	expect_map(m, "relative/a.c", NULL);

	/* Equal length: the later rule wins, as the last --source-map given. */
	CHECK(source_map_add(m, "/build", "/elsewhere", &err) == 0);
	expect_map(m, "/build/a.c", "/elsewhere/a.c");

	CHECK(source_map_add_spec(m, "/=/chroot", &err) == 0);
	expect_map(m, "/usr/include/stdio.h", "/chroot/usr/include/stdio.h");
	expect_map(m, "/build/a.c", "/elsewhere/a.c");

	CHECK(source_map_add_spec(m, "noequals", &err) == -1);
	CHECK(strstr(err.msg, "FROM=TO") != NULL);
	CHECK(source_map_add_spec(m, "=/x", &err) == -1);
	CHECK(source_map_add_spec(m, "/a=", &err) == 0);   /* strip a prefix */
	expect_map(m, "/a/b.c", "/b.c");
	source_map_free(m);
}

/* "." and ".." on either side: a build configured as ../configure names its
 * sources /b/build/../src/x.c in debug info and in abs_top_srcdir. */
static void test_dot_components(void)
{
	struct source_map *m = source_map_new();
	struct xerr err;
	source_map_set_rustc(m, NULL);
	CHECK(source_map_add_spec(m, "/b/build/../src/=/mapped", &err) == 0);
	expect_map(m, "/b/src/x.c", "/mapped/x.c");
	expect_map(m, "/b/build/../src/sub/./y.c", "/mapped/sub/y.c");
	expect_map(m, "/b//src/z.c", "/mapped/z.c");
	expect_map(m, "/b/build/x.c", NULL);
	expect_map(m, "/b/srcx/x.c", NULL);
	CHECK(source_map_add_spec(m, "/../../=/root", &err) == 0);   /* above / is / */
	expect_map(m, "/etc/hosts", "/root/etc/hosts");
	source_map_free(m);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void test_rust_src(void)
{
	char dir[] = "/tmp/xgdbprof-srcmap-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	char sysroot[512], lib[600], rustc[600], cmd[700], counter[600];
	snprintf(sysroot, sizeof sysroot, "%s/sysroot", dir);
	snprintf(lib, sizeof lib, "%s/lib/rustlib/src/rust/library", sysroot);
	snprintf(rustc, sizeof rustc, "%s/fake-rustc", dir);
	snprintf(counter, sizeof counter, "%s/runs", dir);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s/core/src'", lib);
	CHECK(system(cmd) == 0);
	char script[2048];
	snprintf(script, sizeof script,
		 "#!/bin/sh\n"
		 "echo run >> '%s'\n"
		 "[ \"$1 $2\" = '--print sysroot' ] || exit 3\n"
		 "echo '%s'\n", counter, sysroot);
	write_file(rustc, script, 0755);

	static const char std_path[] =
		"/rustc/59807616e1d5d6e29ac5caf23bd7d2a4e4b9c8a1/library/core/src/hash/mod.rs";
	char want[1024];
	snprintf(want, sizeof want, "%s/core/src/hash/mod.rs", lib);

	struct source_map *m = source_map_new();
	source_map_set_rustc(m, rustc);
	CHECK(source_map_active(m));
	expect_map(m, "/home/me/x.rs", NULL);       /* rustc not run for this */
	struct stat st;
	CHECK(stat(counter, &st) != 0);
	expect_map(m, std_path, want);
	expect_map(m, std_path, want);               /* cached: rustc ran once */
	expect_map(m, "/rustc/59807616e/library/core/src/x.rs", NULL);   /* short hash */
	expect_map(m, "/rustc/59807616e1d5d6e29ac5caf23bd7d2a4e4b9c8a1/libraryx/a.rs", NULL);
	FILE *f = fopen(counter, "r");
	int runs = 0;
	char buf[64];
	while (f && fgets(buf, sizeof buf, f))
		runs++;
	if (f)
		fclose(f);
	CHECK(runs == 1);

	/* An explicit rule beats the automatic mapping. */
	struct xerr err;
	CHECK(source_map_add_spec(m, "/rustc=/mine", &err) == 0);
	snprintf(want, sizeof want, "/mine%s", std_path + strlen("/rustc"));
	expect_map(m, std_path, want);
	source_map_free(m);

	/* A rustc that fails, or is missing, just disables the mapping. */
	m = source_map_new();
	snprintf(cmd, sizeof cmd, "%s/no-such-rustc", dir);
	source_map_set_rustc(m, cmd);
	expect_map(m, std_path, NULL);
	CHECK(source_map_rust_library(m) == NULL);
	source_map_set_rustc(m, "/bin/false");
	expect_map(m, std_path, NULL);
	source_map_free(m);

	/* A sysroot without rust-src installed maps nothing. */
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", lib);
	CHECK(system(cmd) == 0);
	m = source_map_new();
	source_map_set_rustc(m, rustc);
	expect_map(m, std_path, NULL);
	source_map_free(m);

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	test_rules();
	test_dot_components();
	test_rust_src();
	if (test_failures) {
		fprintf(stderr, "%d failure(s)\n", test_failures);
		return 1;
	}
	printf("source_map: all checks passed\n");
	return 0;
}
