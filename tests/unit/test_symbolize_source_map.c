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

/* A fake rustc: prints SYSROOT for `--print sysroot` and `commit-hash:
 * COMMIT` for `-vV`, and counts its runs in COUNTER. */
static void write_fake_rustc(const char *path, const char *counter, const char *sysroot,
			     const char *commit)
{
	char script[4096];
	snprintf(script, sizeof script,
		 "#!/bin/sh\n"
		 "echo run >> '%s'\n"
		 "if [ \"$1\" = -vV ]; then\n"
		 "  printf 'rustc 1.95.0 (x)\\nbinary: rustc\\ncommit-hash: %s\\nrelease: 1.95.0\\n'\n"
		 "  exit 0\n"
		 "fi\n"
		 "[ \"$1 $2\" = '--print sysroot' ] || exit 3\n"
		 "echo '%s'\n", counter, commit, sysroot);
	write_file(path, script, 0755);
}

static int count_runs(const char *counter)
{
	FILE *f = fopen(counter, "r");
	int runs = 0;
	char buf[64];
	while (f && fgets(buf, sizeof buf, f))
		runs++;
	if (f)
		fclose(f);
	return runs;
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
	static const char commit[] = "59807616e1d5d6e29ac5caf23bd7d2a4e4b9c8a1";
	static const char other[] = "0123456789abcdef0123456789abcdef01234567";
	write_fake_rustc(rustc, counter, sysroot, commit);

	static const char std_path[] =
		"/rustc/59807616e1d5d6e29ac5caf23bd7d2a4e4b9c8a1/library/core/src/hash/mod.rs";
	static const char other_path[] =
		"/rustc/0123456789abcdef0123456789abcdef01234567/library/core/src/hash/mod.rs";
	char want[1024];
	snprintf(want, sizeof want, "%s/core/src/hash/mod.rs", lib);

	struct source_map *m = source_map_new();
	source_map_set_rustc(m, rustc);
	CHECK(source_map_active(m));
	expect_map(m, "/home/me/x.rs", NULL);       /* rustc not run for this */
	struct stat st;
	CHECK(stat(counter, &st) != 0);
	expect_map(m, std_path, want);
	expect_map(m, std_path, want);               /* cached: rustc ran once per question */
	expect_map(m, "/rustc/59807616e/library/core/src/x.rs", NULL);   /* short hash */
	expect_map(m, "/rustc/59807616e1d5d6e29ac5caf23bd7d2a4e4b9c8a1/libraryx/a.rs", NULL);
	CHECK(source_map_rust_status(m, std_path) == SOURCE_MAP_RUST_MAPPED);
	CHECK(source_map_rust_status(m, "/home/me/x.rs") == SOURCE_MAP_RUST_NOT_STD);
	CHECK_STR(source_map_rustc_commit(m), commit);
	/* Another rustc's std is never mapped to this one's sources: its lines
	 * differ, and the wrong one would be shown as hot. */
	expect_map(m, other_path, NULL);
	CHECK(source_map_rust_status(m, other_path) == SOURCE_MAP_RUST_OTHER_COMMIT);
	/* The frames' paths are left alone whatever rustc says. */
	CHECK(source_map_apply_rules(m, std_path) == NULL);
	CHECK(count_runs(counter) == 2);              /* -vV and --print sysroot */

	/* An explicit rule beats the automatic mapping, for any commit. */
	struct xerr err;
	CHECK(source_map_add_spec(m, "/rustc=/mine", &err) == 0);
	snprintf(want, sizeof want, "/mine%s", std_path + strlen("/rustc"));
	expect_map(m, std_path, want);
	snprintf(want, sizeof want, "/mine%s", other_path + strlen("/rustc"));
	expect_map(m, other_path, want);
	source_map_free(m);

	/* A local rustc of another commit maps nothing, rust-src or not. */
	write_fake_rustc(rustc, counter, sysroot, other);
	m = source_map_new();
	source_map_set_rustc(m, rustc);
	expect_map(m, std_path, NULL);
	CHECK(source_map_rust_status(m, std_path) == SOURCE_MAP_RUST_OTHER_COMMIT);
	CHECK_STR(source_map_rustc_commit(m), other);
	snprintf(want, sizeof want, "%s/core/src/hash/mod.rs", lib);
	expect_map(m, other_path, want);
	source_map_free(m);

	/* A rustc that names no commit (built outside git) cannot vouch for
	 * its sources. */
	write_fake_rustc(rustc, counter, sysroot, "unknown");
	m = source_map_new();
	source_map_set_rustc(m, rustc);
	expect_map(m, std_path, NULL);
	CHECK(source_map_rust_status(m, std_path) == SOURCE_MAP_RUST_OTHER_COMMIT);
	CHECK_STR(source_map_rustc_commit(m), "");
	source_map_free(m);
	write_fake_rustc(rustc, counter, sysroot, commit);

	/* A rustc that fails, or is missing, just disables the mapping. */
	m = source_map_new();
	snprintf(cmd, sizeof cmd, "%s/no-such-rustc", dir);
	source_map_set_rustc(m, cmd);
	expect_map(m, std_path, NULL);
	CHECK(source_map_rust_library(m) == NULL);
	CHECK(source_map_rustc_commit(m) == NULL);
	CHECK(source_map_rust_status(m, std_path) == SOURCE_MAP_RUST_NO_RUSTC);
	source_map_set_rustc(m, "/bin/false");
	expect_map(m, std_path, NULL);
	source_map_free(m);

	/* A sysroot without rust-src installed maps nothing. */
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", lib);
	CHECK(system(cmd) == 0);
	m = source_map_new();
	source_map_set_rustc(m, rustc);
	expect_map(m, std_path, NULL);
	CHECK(source_map_rust_status(m, std_path) == SOURCE_MAP_RUST_NO_SRC);
	source_map_free(m);

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* Reports show std paths short; the commit is said once elsewhere. */
static void test_std_paths(void)
{
	char commit[41];
	const char *p = "/rustc/59807616E1fa2540724bfbac14d7976d7e4a3860/library/core/src/tuple.rs";
	CHECK_STR(source_map_rust_std_path(p, commit), "core/src/tuple.rs");
	CHECK_STR(commit, "59807616e1fa2540724bfbac14d7976d7e4a3860");
	CHECK_STR(source_map_shown_path(p), "core/src/tuple.rs");
	CHECK_STR(source_map_shown_path("/home/me/src/main.rs"), "/home/me/src/main.rs");
	CHECK(source_map_rust_std_path("/rustc/59807616e/library/core/src/x.rs", commit) == NULL);
	CHECK(source_map_rust_std_path("/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/", NULL) == NULL);
	CHECK(source_map_rust_std_path("/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/src/x.rs", NULL) == NULL);
	CHECK(source_map_rust_std_path("/rustc/59807616e1fa2540724bfbac14d7976d7e4a386x/library/a", NULL) == NULL);
	CHECK(source_map_rust_std_path(NULL, NULL) == NULL);
	CHECK_STR(source_map_shown_path("/rustc/"), "/rustc/");
}

int main(void)
{
	test_rules();
	test_dot_components();
	test_rust_src();
	test_std_paths();
	if (test_failures) {
		fprintf(stderr, "%d failure(s)\n", test_failures);
		return 1;
	}
	printf("source_map: all checks passed\n");
	return 0;
}
