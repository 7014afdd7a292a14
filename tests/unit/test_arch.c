/* test_arch.c — the x86-64 facts of src/arch/: system call numbers both
 * ways, which calls wait, the ERESTART* results, register names and DWARF
 * numbers, argument registers, and reading gdb 13's disassembly (lines
 * copied from its output in both syntaxes). Exit 0 pass, 1 fail. */
#include "arch/insn.h"
#include "arch/regs.h"
#include "arch/syscalls.h"

#include <stdio.h>
#include <string.h>
#include "check.h"

static void test_syscall_numbers(void)
{
	CHECK_STR(arch_syscall_name(0), "read");
	CHECK_STR(arch_syscall_name(1), "write");
	CHECK_STR(arch_syscall_name(39), "getpid");
	CHECK_STR(arch_syscall_name(202), "futex");
	CHECK_STR(arch_syscall_name(231), "exit_group");
	CHECK_STR(arch_syscall_name(232), "epoll_wait");
	CHECK_STR(arch_syscall_name(450), "set_mempolicy_home_node");
	CHECK_STR(arch_syscall_name(ARCH_SYSCALL_FUTEX), "futex");
	CHECK_STR(arch_syscall_name(ARCH_SYSCALL_SCHED_YIELD), "sched_yield");
	CHECK_STR(arch_syscall_name(ARCH_SYSCALL_RESTART_SYSCALL), "restart_syscall");
	/* Holes in the numbering (335..423 were never assigned), past the
	 * end, and orig_rax outside a call. */
	CHECK(arch_syscall_name(335) == NULL);
	CHECK(arch_syscall_name(423) == NULL);
	CHECK(arch_syscall_name(451) == NULL);
	CHECK(arch_syscall_name(100000) == NULL);
	CHECK(arch_syscall_name(-1) == NULL);
	CHECK(arch_syscall_name((int64_t)0x7fffffff + 1) == NULL);

	CHECK(arch_syscall_number("read") == 0);
	CHECK(arch_syscall_number("futex") == 202);
	CHECK(arch_syscall_number("exit_group") == 231);
	CHECK(arch_syscall_number("clone3") == 435);
	CHECK(arch_syscall_number("no_such_call") == -1);
	CHECK(arch_syscall_number("Read") == -1);
	CHECK(arch_syscall_number("rea") == -1);
	CHECK(arch_syscall_number("") == -1);
	CHECK(arch_syscall_number(NULL) == -1);
}

/* Every entry found again both ways; ascending numbers (the number lookup
 * searches by halves) and no name twice. */
static void test_syscall_round_trip(void)
{
	size_t n;
	const struct arch_syscall *all = arch_syscalls(&n);
	CHECK(n == 362);
	for (size_t i = 0; i < n; i++) {
		CHECK_STR(arch_syscall_name(all[i].nr), all[i].name);
		CHECK_MSG(arch_syscall_number(all[i].name) == all[i].nr, "%s: %d, not %d", all[i].name,
			  arch_syscall_number(all[i].name), all[i].nr);
		if (i > 0)
			CHECK_MSG(all[i - 1].nr < all[i].nr, "%s (%d) after %s (%d)", all[i].name, all[i].nr,
				  all[i - 1].name, all[i - 1].nr);
		for (size_t j = 0; j < i; j++)
			CHECK_MSG(strcmp(all[i].name, all[j].name) != 0, "%s twice", all[i].name);
	}
}

enum { FUTEX_WAIT = 0, FUTEX_WAKE = 1, FUTEX_LOCK_PI = 6, FUTEX_WAIT_BITSET = 9, FUTEX_PRIVATE_FLAG = 128,
       FUTEX_CLOCK_REALTIME = 256 };

static void test_waiting_calls(void)
{
	CHECK_STR(arch_syscall_waiting(202, FUTEX_WAIT), "futex");
	CHECK_STR(arch_syscall_waiting(202, FUTEX_WAIT | FUTEX_PRIVATE_FLAG), "futex");
	CHECK_STR(arch_syscall_waiting(202, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME), "futex");
	CHECK_STR(arch_syscall_waiting(202, FUTEX_LOCK_PI), "futex");
	CHECK(arch_syscall_waiting(202, FUTEX_WAKE) == NULL);
	CHECK(arch_syscall_waiting(202, FUTEX_WAKE | FUTEX_PRIVATE_FLAG) == NULL);
	CHECK_STR(arch_syscall_waiting(232, 0), "epoll_wait");
	CHECK_STR(arch_syscall_waiting(281, 0), "epoll_pwait");
	CHECK_STR(arch_syscall_waiting(230, 0), "clock_nanosleep");
	CHECK_STR(arch_syscall_waiting(24, 0), "sched_yield");
	CHECK_STR(arch_syscall_waiting(449, 0), "futex_waitv");
	CHECK_STR(arch_syscall_waiting(61, 0), "wait4");
	/* A blocking read may be running in the kernel: not a wait here. */
	CHECK(arch_syscall_waiting(0, 0) == NULL);
	CHECK(arch_syscall_waiting(39, 0) == NULL);    /* getpid */
	CHECK(arch_syscall_waiting(231, 0) == NULL);   /* exit_group */
	CHECK(arch_syscall_waiting(-1, 0) == NULL);
	CHECK(arch_syscall_waiting(100000, 0) == NULL);

	CHECK_STR(arch_syscall_wait_reason(202, FUTEX_WAIT | FUTEX_PRIVATE_FLAG), "futex wait");
	CHECK_STR(arch_syscall_wait_reason(202, FUTEX_WAKE | FUTEX_PRIVATE_FLAG), "futex wake");
	CHECK_STR(arch_syscall_wait_reason(449, 0), "futex wait");
	CHECK_STR(arch_syscall_wait_reason(0, 0), "read");
	CHECK_STR(arch_syscall_wait_reason(295, 0), "read");
	CHECK_STR(arch_syscall_wait_reason(1, 0), "write");
	CHECK_STR(arch_syscall_wait_reason(45, 0), "recv");
	CHECK_STR(arch_syscall_wait_reason(307, 0), "send");
	CHECK_STR(arch_syscall_wait_reason(35, 0), "sleep");
	CHECK_STR(arch_syscall_wait_reason(232, 0), "poll/epoll");
	CHECK_STR(arch_syscall_wait_reason(24, 0), "yield");
	CHECK_STR(arch_syscall_wait_reason(34, 0), "signal wait");
	CHECK_STR(arch_syscall_wait_reason(75, 0), "fsync");
	CHECK_STR(arch_syscall_wait_reason(-1, 0), "no system call");
	CHECK_STR(arch_syscall_wait_reason(39, 0), "other system call");
	CHECK_STR(arch_syscall_wait_reason(-2, 0), "other system call");

	/* Whatever waits is named as the table names it and has a reason. */
	size_t n, waiting = 0;
	const struct arch_syscall *all = arch_syscalls(&n);
	for (size_t i = 0; i < n; i++) {
		const char *name = arch_syscall_waiting(all[i].nr, FUTEX_WAIT);
		if (!name)
			continue;
		waiting++;
		CHECK(name == all[i].name);
		CHECK_MSG(strcmp(arch_syscall_wait_reason(all[i].nr, FUTEX_WAIT), "other system call") != 0,
			  "%s waits without a reason", name);
	}
	CHECK_MSG(waiting == 23, "%zu calls wait, not 23", waiting);
}

static void test_interrupted_results(void)
{
	CHECK(ARCH_ERESTARTSYS == 512 && ARCH_ERESTARTNOINTR == 513 && ARCH_ERESTARTNOHAND == 514 &&
	      ARCH_ERESTART_RESTARTBLOCK == 516 && ARCH_EINTR == 4);
	CHECK(arch_syscall_restarts(-512));
	CHECK(arch_syscall_restarts(-513));
	CHECK(arch_syscall_restarts(-514));
	CHECK(arch_syscall_restarts(-516));
	CHECK(!arch_syscall_restarts(-515));   /* ENOIOCTLCMD: not a restart */
	CHECK(!arch_syscall_restarts(-4));
	CHECK(!arch_syscall_restarts(512));
	CHECK(!arch_syscall_restarts(0));
	CHECK(!arch_syscall_restarts(-517));

	for (int64_t code = 512; code <= 516; code++)
		CHECK_MSG(arch_syscall_interrupted(-code), "-%lld", (long long)code);
	CHECK(arch_syscall_interrupted(-4));
	CHECK(!arch_syscall_interrupted(-11));   /* EAGAIN: the call ended by itself */
	CHECK(!arch_syscall_interrupted(-511));
	CHECK(!arch_syscall_interrupted(-517));
	CHECK(!arch_syscall_interrupted(0));
	CHECK(!arch_syscall_interrupted(4));
	CHECK(!arch_syscall_interrupted(512));
}

static void test_registers(void)
{
	CHECK(arch_reg_dwarf(ARCH_RSP) == 7);
	CHECK(arch_reg_dwarf(ARCH_RIP) == 16);
	CHECK(arch_reg_dwarf(ARCH_RAX) == 0);
	CHECK(arch_reg_dwarf(ARCH_RBX) == 3);
	CHECK(arch_reg_dwarf(ARCH_RBP) == 6);
	CHECK(arch_reg_dwarf(ARCH_RDI) == 5);
	CHECK(arch_reg_dwarf(ARCH_R12) == 12);
	CHECK(arch_reg_dwarf(ARCH_R15) == 15);
	CHECK(arch_reg_dwarf(ARCH_ORIG_RAX) == -1);
	CHECK(arch_reg_dwarf(ARCH_NREGS) == -1);

	CHECK_STR(arch_reg_name(ARCH_RIP), "rip");
	CHECK_STR(arch_reg_name(ARCH_RSP), "rsp");
	CHECK_STR(arch_reg_name(ARCH_R10), "r10");
	CHECK_STR(arch_reg_name(ARCH_ORIG_RAX), "orig_rax");
	CHECK(arch_reg_name(ARCH_NREGS) == NULL);
	CHECK(arch_reg_name((enum arch_reg)-1) == NULL);
	for (int a = 0; a < ARCH_NREGS; a++)
		for (int b = 0; b < a; b++) {
			CHECK_MSG(strcmp(arch_reg_name((enum arch_reg)a), arch_reg_name((enum arch_reg)b)) != 0,
				  "two registers named %s", arch_reg_name((enum arch_reg)a));
			CHECK_MSG(arch_reg_dwarf((enum arch_reg)a) < 0 ||
				  arch_reg_dwarf((enum arch_reg)a) != arch_reg_dwarf((enum arch_reg)b),
				  "%s and %s share a DWARF number", arch_reg_name((enum arch_reg)a),
				  arch_reg_name((enum arch_reg)b));
		}

	const enum arch_reg asked[] = { ARCH_RBP, ARCH_ORIG_RAX, ARCH_R9 };
	const char *names[3] = { NULL, NULL, NULL };
	arch_reg_names(asked, 3, names);
	CHECK_STR(names[0], "rbp");
	CHECK_STR(names[1], "orig_rax");
	CHECK_STR(names[2], "r9");

	const char *call[ARCH_ARG_REGS] = { "rdi", "rsi", "rdx", "rcx", "r8", "r9" };
	const char *sys[ARCH_ARG_REGS] = { "rdi", "rsi", "rdx", "r10", "r8", "r9" };
	for (size_t i = 0; i < ARCH_ARG_REGS; i++) {
		CHECK_STR(arch_reg_name(arch_call_arg_reg(i)), call[i]);
		CHECK_STR(arch_reg_name(arch_syscall_arg_reg(i)), sys[i]);
	}
	CHECK(arch_call_arg_reg(ARCH_ARG_REGS) == ARCH_NREGS);
	CHECK(arch_syscall_arg_reg(ARCH_ARG_REGS) == ARCH_NREGS);
	CHECK(ARCH_RED_ZONE == 128);
}

/* gdb 13's "inst" text of -data-disassemble, AT&T (its default) and Intel
 * (set disassembly-flavor intel), from a C and a Rust program. */
static const char *const rip_relative[] = {
	"add    0x2eae(%rip),%ebx        # 0x401c <counter>",
	"add    %eax,0x2ecb(%rip)        # 0x401c <counter>",
	"lea    -0x7(%rip),%rax        # 0x0 <f>",
	"jmp    *0x10(%rip)        # 0x1d <f+29>",
	"mov    0x0(%rip),%rcx        # 0x14 <f+20>",
	"cmpb   $0x0,0x20(%rip)        # 0x49",
	"call   *0x40425(%rip)        # 0x54360",
	"lea    0xc0(%rip),%rax        # 0x14060 <_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17hc72f06991d6e768fE>",
	"add    ebx,DWORD PTR [rip+0x2eae]        # 0x401c <counter>",
	"add    DWORD PTR [rip+0x2ecb],eax        # 0x401c <counter>",
	"lea    rax,[rip+0xfffffffffffffff9]        # 0x0 <f>",
	"jmp    QWORD PTR [rip+0x10]        # 0x1d <f+29>",
	"cmp    BYTE PTR [rip+0x20],0x0        # 0x49",
	"call   QWORD PTR [rip+0x40425]        # 0x54360",
};

static const char *const not_rip_relative[] = {
	/* strstr(text, "rip") took these for RIP-relative: the symbols */
	"call   0x1142 <strip>",
	"call   0x14030 <_ZN1m5strip17h1e5a3d39548341caE>",
	"push   %rbx",
	"mov    (%rsi),%rdi",
	"nopw   (%rax,%rax,1)",
	"mov    %fs:0x28,%rax",
	"sub    $0x8,%rsp",
	"ret",
	"push   rbx",
	"mov    rdi,QWORD PTR [rsi]",
	"nop    WORD PTR [rax+rax*1]",
	"mov    rax,QWORD PTR fs:0x28",
	"",
};

static void test_rip_relative(void)
{
	for (size_t i = 0; i < sizeof rip_relative / sizeof *rip_relative; i++)
		CHECK_MSG(arch_insn_rip_relative(rip_relative[i]), "not taken for RIP-relative: %s", rip_relative[i]);
	for (size_t i = 0; i < sizeof not_rip_relative / sizeof *not_rip_relative; i++)
		CHECK_MSG(!arch_insn_rip_relative(not_rip_relative[i]), "taken for RIP-relative: %s",
			  not_rip_relative[i]);
	CHECK(!arch_insn_rip_relative(NULL));
}

static void test_transfers_control(void)
{
	CHECK(arch_insn_transfers_control("call   0x1142 <strip>"));
	CHECK(arch_insn_transfers_control("call   *0x40425(%rip)        # 0x54360"));
	CHECK(arch_insn_transfers_control("ret"));
	CHECK(arch_insn_transfers_control("jmp    QWORD PTR [rip+0x10]        # 0x1d <f+29>"));
	CHECK(arch_insn_transfers_control("jne    0x1150 <f+16>"));
	CHECK(arch_insn_transfers_control("loop   0x1150 <f+16>"));
	CHECK(arch_insn_transfers_control("bnd jmp *%r11"));
	CHECK(arch_insn_transfers_control("notrack jmp *%rax"));
	CHECK(!arch_insn_transfers_control("add    0x2eae(%rip),%ebx        # 0x401c <counter>"));
	CHECK(!arch_insn_transfers_control("push   %rbx"));
	CHECK(!arch_insn_transfers_control(""));
	/* the target of a direct branch, as entry counters and syscall sites
	 * check what may land inside the bytes they replace */
	uint64_t to = 0;
	CHECK(arch_insn_direct_target("jne    0x4011a6 <f+38>", &to) && to == 0x4011a6);
	CHECK(arch_insn_direct_target("call   0x401020 <g>", &to) && to == 0x401020);
	CHECK(arch_insn_direct_target("bnd jmp 0x89f4a <pthread_create+3018>", &to) && to == 0x89f4a);
	CHECK(!arch_insn_direct_target("jmp    *%rax", &to));
	CHECK(!arch_insn_direct_target("call   *0x40425(%rip)        # 0x54360", &to));
	CHECK(!arch_insn_direct_target("mov    $0xe,%eax", &to));
	CHECK(!arch_insn_transfers_control(NULL));
	CHECK(ARCH_BREAKPOINT_INSN == 0xCC && ARCH_BREAKPOINT_LEN == 1);
}

int main(void)
{
	test_syscall_numbers();
	test_syscall_round_trip();
	test_waiting_calls();
	test_interrupted_results();
	test_registers();
	test_rip_relative();
	test_transfers_control();
	return test_exit_code();
}
