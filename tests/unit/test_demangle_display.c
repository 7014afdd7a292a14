/* test_demangle_display.c — display names (demangle_display_name): one name
 * per function whatever the mangling, checked on hand-written forms, on
 * pairs of legacy and v0 names of the same function (from the
 * demangle_fixture builds), on the whole demangler corpus (the full and
 * the hash-less form of every symbol must give one display name, and a
 * display name is its own), and on hostile text: unbalanced brackets, deep
 * nesting, a megabyte of input, mutations of real names. CI runs it under
 * ASan/UBSan and valgrind.
 */
#include "symbols/demangle.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static void expect(const char *in, const char *want)
{
	char *got = demangle_display_name(in);
	CHECK_MSG(got && strcmp(got, want) == 0, "display of \"%s\"\n      is \"%s\"\n  expected \"%s\"",
		  in, got ? got : "(null)", want);
	if (got) {
		char *again = demangle_display_name(got);
		CHECK_MSG(again && strcmp(again, got) == 0, "display of \"%s\" is not its own: \"%s\"",
			  got, again ? again : "(null)");
		free(again);
	}
	free(got);
}

/* The same function, spelled by legacy and by v0 mangling. */
static void expect_same(const char *legacy, const char *v0, const char *want)
{
	expect(legacy, want);
	expect(v0, want);
}

/* The same symbol, mangled by legacy and by v0 (the demangle_fixture and
 * names_fixture builds, `nm`): demangled hash-less, then displayed, the two
 * must read the same, and as want. */
static void expect_same_mangled(const char *legacy, const char *v0, const char *want)
{
	char *l = demangle_symbol(legacy, false), *v = demangle_symbol(v0, false);
	CHECK_MSG(l && v, "demangle_symbol failed on \"%s\" or \"%s\"", legacy, v0);
	if (l && v)
		expect_same(l, v, want);
	free(l);
	free(v);
}

/* Closures: legacy spells them {{closure}}, v0 {closure#N}, DWARF's names
 * of generic instances {closure_env#N} (the closure's environment type):
 * one spelling, {closure}, whatever the source. */
static void test_closures(void)
{
	expect_same_mangled("_ZN16demangle_fixture4main28_$u7b$$u7b$closure$u7d$$u7d$17h08a00a13dd358434E",
			    "_RNCNvCsgEFq9VScRRZ_16demangle_fixture4main0",
			    "demangle_fixture::main::{closure}");
	expect_same_mangled("_ZN16demangle_fixture4main28_$u7b$$u7b$closure$u7d$$u7d$28_$u7b$$u7b$closure$u7d$$u7d$"
			    "17h16d42f418ed0ef4bE",
			    "_RNCNCNvCsgEFq9VScRRZ_16demangle_fixture4mains_00B5_",
			    "demangle_fixture::main::{closure}::{closure}");
	expect_same_mangled("_ZN4core3ptr156drop_in_place$LT$std..thread..lifecycle..spawn_unchecked$LT$names_fixture.."
			    "main..$u7b$$u7b$closure$u7d$$u7d$$C$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$"
			    "17h2b9d926e80f142a4E",
			    "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeNCINvNtNtCsjrHSEGnQ3l9_3std6thread9lifecycle"
			    "15spawn_uncheckedNCNvCslIAAwhX8zu_13names_fixture4main0uEs_0EB1J_",
			    "core::ptr::drop_in_place<std::thread::lifecycle::spawn_unchecked::{closure}>");
	/* DWARF's name of the same drop glue instance */
	expect("core::ptr::drop_in_place<std::thread::lifecycle::spawn_unchecked::{closure_env#1}"
	       "<names_fixture::main::{closure_env#0}, ()>>",
	       "core::ptr::drop_in_place<std::thread::lifecycle::spawn_unchecked::{closure}>");
	expect("names_fixture::main::{closure_env#0}", "names_fixture::main::{closure}");
}

static void test_forms(void)
{
	/* plain paths pass through */
	expect("main", "main");
	expect("sled::tree::below_leaf", "sled::tree::below_leaf");
	expect("", "");
	/* inherent methods: the issue's example, and DWARF/legacy style */
	expect_same("sled::tree::Tree<K,V>::insert", "<sled::tree::Tree>::insert::<&[u8], alloc::vec::Vec<u8>>",
		    "sled::tree::Tree::insert");
	expect("<sled::tree::Tree<u64, alloc::string::String>>::insert", "sled::tree::Tree::insert");
	expect_same("alloc::raw_vec::RawVec<T,A>::grow_one", "<alloc::raw_vec::RawVec<u8>>::grow_one",
		    "alloc::raw_vec::RawVec::grow_one");
	expect_same("hashbrown::rustc_entry::<impl hashbrown::map::HashMap<K,V,S,A>>::rustc_entry",
		    "<hashbrown::map::HashMap<alloc::string::String, u32, std::hash::random::RandomState>>::rustc_entry",
		    "hashbrown::map::HashMap::rustc_entry");
	/* inherent impls on primitives and slices */
	expect_same("core::str::<impl str>::len", "<str>::len", "str::len");
	expect_same("core::num::<impl usize>::unchecked_add::precondition_check",
		    "<usize>::unchecked_add::precondition_check", "usize::unchecked_add::precondition_check");
	expect_same("core::slice::<impl [T]>::iter", "<[u8]>::iter", "<[_]>::iter");
	expect_same("core::ptr::const_ptr::<impl *const T>::is_aligned_to", "<*const u8>::is_aligned_to",
		    "<*const _>::is_aligned_to");
	/* trait impls: self type without its arguments, trait without its own */
	expect_same("<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop",
		    "<alloc::vec::Vec<u8> as core::ops::drop::Drop>::drop",
		    "<alloc::vec::Vec as core::ops::drop::Drop>::drop");
	expect_same("alloc::vec::partial_eq::<impl core::cmp::PartialEq<alloc::vec::Vec<U,A2>> for alloc::vec::Vec<T,A1>>::eq",
		    "<alloc::vec::Vec<u8> as core::cmp::PartialEq<alloc::vec::Vec<u8>>>::eq",
		    "<alloc::vec::Vec as core::cmp::PartialEq>::eq");
	expect_same("alloc::str::<impl alloc::borrow::ToOwned for str>::to_owned",
		    "<str as alloc::borrow::ToOwned>::to_owned", "<str as alloc::borrow::ToOwned>::to_owned");
	expect_same("<&T as core::fmt::Debug>::fmt", "<&alloc::string::String as core::fmt::Debug>::fmt",
		    "<&_ as core::fmt::Debug>::fmt");
	expect_same("<&mut T as core::ops::deref::DerefMut>::deref_mut",
		    "<&mut [u8] as core::ops::deref::DerefMut>::deref_mut",
		    "<&mut _ as core::ops::deref::DerefMut>::deref_mut");
	expect_same("core::slice::<impl core::iter::traits::IntoIterator for &'a [T]>::into_iter",
		    "<&[u8] as core::iter::traits::IntoIterator>::into_iter",
		    "<&_ as core::iter::traits::IntoIterator>::into_iter");
	expect_same("core::tuple::<impl core::cmp::Ord for (U,T)>::cmp",
		    "<(u64, u64) as core::cmp::Ord>::cmp", "<(_, _) as core::cmp::Ord>::cmp");
	expect_same("core::array::<impl core::ops::index::Index<I> for [T; N]>::index",
		    "<[u8; 4] as core::ops::index::Index<usize>>::index",
		    "<[_; _] as core::ops::index::Index>::index");
	expect("<(u8,) as core::fmt::Debug>::fmt", "<(_,) as core::fmt::Debug>::fmt");
	expect("<() as core::fmt::Debug>::fmt", "<() as core::fmt::Debug>::fmt");
	expect("<! as core::fmt::Debug>::fmt", "<! as core::fmt::Debug>::fmt");
	expect("<dyn core::any::Any>::is::<u8>", "<dyn core::any::Any>::is");
	expect("<dyn for<'a> core::ops::function::Fn<(&'a u8,), Output = &'a u8> + core::marker::Send as core::fmt::Debug>::fmt",
	       "<dyn core::ops::function::Fn as core::fmt::Debug>::fmt");
	/* nested generics and qualified paths inside arguments are dropped */
	expect("<core::cell::once::OnceCell<core::result::Result<core::option::Option<alloc::boxed::Box<"
	       "addr2line::unit::DwoUnit<gimli::read::endian_slice::EndianSlice<gimli::endianity::LittleEndian>>>>,"
	       " gimli::read::Error>>>::try_init::<<core::cell::once::OnceCell<u8>>::get_or_init<"
	       "<addr2line::unit::ResUnit<u8>>::dwarf_and_unit::{closure#2}>::{closure#0}, !>",
	       "core::cell::once::OnceCell::try_init");
	expect("<<std::sync::once::Once>::call_once<std::rt::cleanup::{closure#0}>::{closure#0} as "
	       "core::fmt::Debug>::fmt",
	       "<std::sync::once::Once::call_once::{closure} as core::fmt::Debug>::fmt");
	expect("demangle_fixture::ty::<fn(u8) -> u16>", "demangle_fixture::ty");
	expect("demangle_fixture::cg_char::<'>'>", "demangle_fixture::cg_char");
	expect("demangle_fixture::cg_char::<'<'>::f", "demangle_fixture::cg_char::f");
	expect("demangle_fixture::cg_str::<\"a>\\\"<\">::f", "demangle_fixture::cg_str::f");
	expect("demangle_fixture::cg_i32::<-5>", "demangle_fixture::cg_i32");
	/* closures and shims, one spelling */
	expect_same("cache_service::main::{{closure}}", "cache_service::main::{closure#0}", "cache_service::main::{closure}");
	expect_same("a::f::{{closure}}::{{closure}}", "a::f::{closure#1}::{closure#12}", "a::f::{closure}::{closure}");
	expect_same("core::ops::function::FnOnce::call_once{{vtable.shim}}",
		    "<demangle_fixture::main::{closure#2} as core::ops::function::FnOnce<()>>::call_once::{shim:vtable#0}",
		    "core::ops::function::FnOnce::call_once::{shim:vtable}");
	expect_same("core::ops::function::FnOnce::call_once",
		    "<std::sys::fs::unix::stat as core::ops::function::FnOnce<(&core::ffi::c_str::CStr,)>>::call_once",
		    "core::ops::function::FnOnce::call_once");
	expect("<fn() as core::ops::function::FnMut<()>>::call_mut", "core::ops::function::FnMut::call_mut");
	expect("a::b::{{reify.shim}}", "a::b::{shim:reify}");
	expect_same("std::hash::random::RandomState::new::KEYS::{{constant}}::{{closure}}",
		    "std::hash::random::RandomState::new::KEYS::{K#0}::{closure#1}",
		    "std::hash::random::RandomState::new::KEYS::{constant}::{closure}");
	/* real impls of the Fn traits keep their self type */
	expect_same("<alloc::boxed::Box<F,A> as core::ops::function::FnOnce<Args>>::call_once",
		    "<alloc::boxed::Box<dyn core::ops::function::FnOnce<(), Output = usize>> as "
		    "core::ops::function::FnOnce<()>>::call_once",
		    "<alloc::boxed::Box as core::ops::function::FnOnce>::call_once");
	expect("core::ops::function::impls::<impl core::ops::function::FnOnce<A> for &F>::call_once",
	       "<&_ as core::ops::function::FnOnce>::call_once");
	/* drop glue keeps the dropped type's constructor */
	expect_same("core::ptr::drop_in_place<alloc::vec::Vec<u8>>",
		    "core::ptr::drop_in_place::<alloc::vec::Vec<u8>>", "core::ptr::drop_in_place<alloc::vec::Vec>");
	expect_same("core::ptr::drop_in_place<demangle_fixture::main::{{closure}}>",
		    "core::ptr::drop_in_place::<demangle_fixture::main::{closure#0}>",
		    "core::ptr::drop_in_place<demangle_fixture::main::{closure}>");
	expect("core::ptr::drop_in_place::<[alloc::string::String]>", "core::ptr::drop_in_place<[_]>");
	/* hashes and crate disambiguators (the full demangled form) */
	expect("sled::tree::Tree<K,V>::insert::h0123456789abcdef", "sled::tree::Tree::insert");
	expect("<core[c1f1a4ba060b9bfa]::str::pattern::CharSearcher as "
	       "core[c1f1a4ba060b9bfa]::str::pattern::Searcher>::next_match",
	       "<core::str::pattern::CharSearcher as core::str::pattern::Searcher>::next_match");
	expect("demangle_fixture::ünïcödé::Größe<T>::verdoppeln", "demangle_fixture::ünïcödé::Größe::verdoppeln");
	/* suffixes the demangler leaves are kept */
	expect("a::b.cold", "a::b.cold");
}

static void test_provided_method(void)
{
	size_t n = 0;
	char *s = demangle_display_provided_method("<names_fixture::Store as names_fixture::Visit>::visit_many::{closure}", &n);
	CHECK_STR(s, "names_fixture::Visit::visit_many::{closure}");
	CHECK(n == strlen("names_fixture::Visit"));
	free(s);
	CHECK(demangle_display_provided_method("names_fixture::Store::probe", &n) == NULL);
	CHECK(demangle_display_provided_method("<[_]>::iter", &n) == NULL);
	CHECK(demangle_display_provided_method("<a as b>", &n) == NULL);
	CHECK(demangle_display_provided_method("<a as b", &n) == NULL);
	CHECK(demangle_display_provided_method("<", &n) == NULL);
	CHECK(demangle_display_provided_method("", &n) == NULL);
}

/* Every symbol of the demangler corpus (legacy and v0 builds of
 * demangle_fixture, std included): its full form (hash, disambiguators) and
 * its hash-less form give the same display name, which is its own. */
static void test_corpus(void)
{
	const char *src = getenv("TOP_SRCDIR");
	if (!src) {
		fprintf(stderr, "TOP_SRCDIR is not set (run through make check)\n");
		test_failures++;
		return;
	}
	char full_path[4096], alt_path[4096];
	snprintf(full_path, sizeof full_path, "%s/tests/demangle/corpus-full.txt", src);
	snprintf(alt_path, sizeof alt_path, "%s/tests/demangle/corpus-alt.txt", src);
	FILE *full = fopen(full_path, "r"), *alt = fopen(alt_path, "r");
	CHECK(full && alt);
	if (!full || !alt) {
		if (full)
			fclose(full);
		if (alt)
			fclose(alt);
		return;
	}
	char *a = NULL, *b = NULL;
	size_t acap = 0, bcap = 0, lines = 0, mismatches = 0;
	while (getline(&a, &acap, full) > 0 && getline(&b, &bcap, alt) > 0) {
		a[strcspn(a, "\n")] = '\0';
		b[strcspn(b, "\n")] = '\0';
		const char *fa = strchr(a, '\t'), *fb = strchr(b, '\t');
		if (!fa || !fb)
			continue;
		lines++;
		char *da = demangle_display_name(fa + 1), *db = demangle_display_name(fb + 1);
		char *again = db ? demangle_display_name(db) : NULL;
		if (!da || !db || strcmp(da, db) != 0 || !again || strcmp(again, db) != 0) {
			if (mismatches++ < 5)
				fprintf(stderr, "corpus: \"%s\" / \"%s\" -> \"%s\" / \"%s\" / \"%s\"\n", fa + 1,
					fb + 1, da ? da : "(null)", db ? db : "(null)", again ? again : "(null)");
		}
		free(da);
		free(db);
		free(again);
	}
	free(a);
	free(b);
	fclose(full);
	fclose(alt);
	CHECK_MSG(lines > 1000, "only %zu corpus lines read", lines);
	CHECK_MSG(mismatches == 0, "%zu corpus names differ between forms", mismatches);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Never crashes, always returns a string no longer than a small multiple
 * of the input (tuples grow: "(,,)" -> "(_, _, _)"). */
static void survive(const char *in, size_t len)
{
	char *out = demangle_display_name(in);
	CHECK(out != NULL);
	if (out)
		CHECK_MSG(strlen(out) <= 3 * len + 16, "output of %zu bytes for %zu of input", strlen(out), len);
	free(out);
	size_t n;
	free(demangle_display_provided_method(in, &n));
}

static void test_hostile(void)
{
	static const char *const cases[] = {
		"<", ">", "<<", ">>", "<>", "<a", "a<", "a<b", "a>b", "<a as", "<a as b", "<a as b>",
		"<a as b>::", "::", "::<", "::<impl", "::<impl ", "a::<impl a for", "{", "}", "{{", "}}",
		"{{closure", "{#}", "{#12}", "#", "'", "''", "'\\", "\"", "\"\\", "a::<'", "a::<\"x",
		"[", "[]", "a[", "a[0", "a[]", "a[zz]", "(", "(,,,)", "<(,,,) as a>::b", "<& as a>::b",
		"<&' as a>::b", "<*const as a>::b", "<dyn as a>::b", "<dyn for< as a>::b", "<[; as x>::f",
		"core::ptr::drop_in_place<", "core::ptr::drop_in_place::<", "x::drop_in_place<<<",
		"<< as >::>::", " as ", "<impl>", "a::<impl>::b", "a::<impl  for >::b", "-><->",
		"a::h0123456789abcdef", "::h0123456789abcdef", "h0123456789abcdef",
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		survive(cases[i], strlen(cases[i]));

	/* a megabyte of each: nesting far past the depth limit, closers only,
	 * qualified paths nested in qualified paths, and a flat long name */
	size_t big = 1 << 20;
	char *s = malloc(big + 1);
	CHECK(s != NULL);
	if (!s)
		return;
	const char *unit[] = { "<", ">", "<a as ", "::<", "{{", "(", "[", "a::", "<&", "'" };
	for (size_t u = 0; u < sizeof unit / sizeof unit[0]; u++) {
		size_t ul = strlen(unit[u]), len = 0;
		while (len + ul <= big) {
			memcpy(s + len, unit[u], ul);
			len += ul;
		}
		s[len] = '\0';
		survive(s, len);
	}
	/* deep but valid: <<<…<a as b>::c as b>::c …> */
	size_t len = 0;
	for (int d = 0; d < 20000 && len + 8 < big; d++)
		s[len++] = '<';
	memcpy(s + len, "a as b>", 7);
	len += 7;
	while (len + 12 < big && s[0] == '<') {
		memcpy(s + len, "::c as b>", 9);
		len += 9;
		if (len > 20000 * 10)
			break;
	}
	s[len] = '\0';
	survive(s, len);
	free(s);

	/* mutations of real names: truncations, byte flips, bracket insertions */
	static const char *const seeds[] = {
		"<names_fixture::Store<u64, u32>>::probe::<u64, <names_fixture::Store<u64, u32> as "
		"names_fixture::Visit>::visit::{closure#1}>",
		"core::slice::<impl core::iter::traits::IntoIterator for &'a [T]>::into_iter",
		"<core::iter::adapters::map::Map<core::slice::iter::Iter<u64>, <a::S<u64> as a::V>::m::{closure#0}> "
		"as core::iter::traits::iterator::Iterator>::fold::<u64, {closure}>",
		"demangle_fixture::cg_str::<\"a>\\\"<\">::f",
		"core::ops::function::FnOnce::call_once{{vtable.shim}}",
	};
	char buf[512];
	for (int round = 0; round < 20000; round++) {
		const char *seed = seeds[rng() % (sizeof seeds / sizeof seeds[0])];
		size_t n = strlen(seed);
		memcpy(buf, seed, n + 1);
		size_t cut = (size_t)(rng() % (n + 1));
		buf[cut] = '\0';
		for (int k = (int)(rng() % 4); k > 0 && cut > 0; k--) {
			static const char bytes[] = "<>{}()[]'\":# ,;&*-\x80\xff";
			buf[rng() % cut] = bytes[rng() % (sizeof bytes - 1)];
		}
		survive(buf, strlen(buf));
	}
}

int main(void)
{
	test_forms();
	test_closures();
	test_provided_method();
	test_corpus();
	test_hostile();
	return test_exit_code();
}
