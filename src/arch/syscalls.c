/* syscalls.c — the x86-64 system call table and the classifications over it
 * (see syscalls.h). */
#include "arch/syscalls.h"

#include <stdlib.h>
#include <string.h>

/* Generated once from <asm/unistd_64.h>; ascending by number (the lookups
 * search it by halves). */
static const struct arch_syscall syscall_table[] = {
	{ "read", 0 },
	{ "write", 1 },
	{ "open", 2 },
	{ "close", 3 },
	{ "stat", 4 },
	{ "fstat", 5 },
	{ "lstat", 6 },
	{ "poll", 7 },
	{ "lseek", 8 },
	{ "mmap", 9 },
	{ "mprotect", 10 },
	{ "munmap", 11 },
	{ "brk", 12 },
	{ "rt_sigaction", 13 },
	{ "rt_sigprocmask", 14 },
	{ "rt_sigreturn", 15 },
	{ "ioctl", 16 },
	{ "pread64", 17 },
	{ "pwrite64", 18 },
	{ "readv", 19 },
	{ "writev", 20 },
	{ "access", 21 },
	{ "pipe", 22 },
	{ "select", 23 },
	{ "sched_yield", 24 },
	{ "mremap", 25 },
	{ "msync", 26 },
	{ "mincore", 27 },
	{ "madvise", 28 },
	{ "shmget", 29 },
	{ "shmat", 30 },
	{ "shmctl", 31 },
	{ "dup", 32 },
	{ "dup2", 33 },
	{ "pause", 34 },
	{ "nanosleep", 35 },
	{ "getitimer", 36 },
	{ "alarm", 37 },
	{ "setitimer", 38 },
	{ "getpid", 39 },
	{ "sendfile", 40 },
	{ "socket", 41 },
	{ "connect", 42 },
	{ "accept", 43 },
	{ "sendto", 44 },
	{ "recvfrom", 45 },
	{ "sendmsg", 46 },
	{ "recvmsg", 47 },
	{ "shutdown", 48 },
	{ "bind", 49 },
	{ "listen", 50 },
	{ "getsockname", 51 },
	{ "getpeername", 52 },
	{ "socketpair", 53 },
	{ "setsockopt", 54 },
	{ "getsockopt", 55 },
	{ "clone", 56 },
	{ "fork", 57 },
	{ "vfork", 58 },
	{ "execve", 59 },
	{ "exit", 60 },
	{ "wait4", 61 },
	{ "kill", 62 },
	{ "uname", 63 },
	{ "semget", 64 },
	{ "semop", 65 },
	{ "semctl", 66 },
	{ "shmdt", 67 },
	{ "msgget", 68 },
	{ "msgsnd", 69 },
	{ "msgrcv", 70 },
	{ "msgctl", 71 },
	{ "fcntl", 72 },
	{ "flock", 73 },
	{ "fsync", 74 },
	{ "fdatasync", 75 },
	{ "truncate", 76 },
	{ "ftruncate", 77 },
	{ "getdents", 78 },
	{ "getcwd", 79 },
	{ "chdir", 80 },
	{ "fchdir", 81 },
	{ "rename", 82 },
	{ "mkdir", 83 },
	{ "rmdir", 84 },
	{ "creat", 85 },
	{ "link", 86 },
	{ "unlink", 87 },
	{ "symlink", 88 },
	{ "readlink", 89 },
	{ "chmod", 90 },
	{ "fchmod", 91 },
	{ "chown", 92 },
	{ "fchown", 93 },
	{ "lchown", 94 },
	{ "umask", 95 },
	{ "gettimeofday", 96 },
	{ "getrlimit", 97 },
	{ "getrusage", 98 },
	{ "sysinfo", 99 },
	{ "times", 100 },
	{ "ptrace", 101 },
	{ "getuid", 102 },
	{ "syslog", 103 },
	{ "getgid", 104 },
	{ "setuid", 105 },
	{ "setgid", 106 },
	{ "geteuid", 107 },
	{ "getegid", 108 },
	{ "setpgid", 109 },
	{ "getppid", 110 },
	{ "getpgrp", 111 },
	{ "setsid", 112 },
	{ "setreuid", 113 },
	{ "setregid", 114 },
	{ "getgroups", 115 },
	{ "setgroups", 116 },
	{ "setresuid", 117 },
	{ "getresuid", 118 },
	{ "setresgid", 119 },
	{ "getresgid", 120 },
	{ "getpgid", 121 },
	{ "setfsuid", 122 },
	{ "setfsgid", 123 },
	{ "getsid", 124 },
	{ "capget", 125 },
	{ "capset", 126 },
	{ "rt_sigpending", 127 },
	{ "rt_sigtimedwait", 128 },
	{ "rt_sigqueueinfo", 129 },
	{ "rt_sigsuspend", 130 },
	{ "sigaltstack", 131 },
	{ "utime", 132 },
	{ "mknod", 133 },
	{ "uselib", 134 },
	{ "personality", 135 },
	{ "ustat", 136 },
	{ "statfs", 137 },
	{ "fstatfs", 138 },
	{ "sysfs", 139 },
	{ "getpriority", 140 },
	{ "setpriority", 141 },
	{ "sched_setparam", 142 },
	{ "sched_getparam", 143 },
	{ "sched_setscheduler", 144 },
	{ "sched_getscheduler", 145 },
	{ "sched_get_priority_max", 146 },
	{ "sched_get_priority_min", 147 },
	{ "sched_rr_get_interval", 148 },
	{ "mlock", 149 },
	{ "munlock", 150 },
	{ "mlockall", 151 },
	{ "munlockall", 152 },
	{ "vhangup", 153 },
	{ "modify_ldt", 154 },
	{ "pivot_root", 155 },
	{ "_sysctl", 156 },
	{ "prctl", 157 },
	{ "arch_prctl", 158 },
	{ "adjtimex", 159 },
	{ "setrlimit", 160 },
	{ "chroot", 161 },
	{ "sync", 162 },
	{ "acct", 163 },
	{ "settimeofday", 164 },
	{ "mount", 165 },
	{ "umount2", 166 },
	{ "swapon", 167 },
	{ "swapoff", 168 },
	{ "reboot", 169 },
	{ "sethostname", 170 },
	{ "setdomainname", 171 },
	{ "iopl", 172 },
	{ "ioperm", 173 },
	{ "create_module", 174 },
	{ "init_module", 175 },
	{ "delete_module", 176 },
	{ "get_kernel_syms", 177 },
	{ "query_module", 178 },
	{ "quotactl", 179 },
	{ "nfsservctl", 180 },
	{ "getpmsg", 181 },
	{ "putpmsg", 182 },
	{ "afs_syscall", 183 },
	{ "tuxcall", 184 },
	{ "security", 185 },
	{ "gettid", 186 },
	{ "readahead", 187 },
	{ "setxattr", 188 },
	{ "lsetxattr", 189 },
	{ "fsetxattr", 190 },
	{ "getxattr", 191 },
	{ "lgetxattr", 192 },
	{ "fgetxattr", 193 },
	{ "listxattr", 194 },
	{ "llistxattr", 195 },
	{ "flistxattr", 196 },
	{ "removexattr", 197 },
	{ "lremovexattr", 198 },
	{ "fremovexattr", 199 },
	{ "tkill", 200 },
	{ "time", 201 },
	{ "futex", 202 },
	{ "sched_setaffinity", 203 },
	{ "sched_getaffinity", 204 },
	{ "set_thread_area", 205 },
	{ "io_setup", 206 },
	{ "io_destroy", 207 },
	{ "io_getevents", 208 },
	{ "io_submit", 209 },
	{ "io_cancel", 210 },
	{ "get_thread_area", 211 },
	{ "lookup_dcookie", 212 },
	{ "epoll_create", 213 },
	{ "epoll_ctl_old", 214 },
	{ "epoll_wait_old", 215 },
	{ "remap_file_pages", 216 },
	{ "getdents64", 217 },
	{ "set_tid_address", 218 },
	{ "restart_syscall", 219 },
	{ "semtimedop", 220 },
	{ "fadvise64", 221 },
	{ "timer_create", 222 },
	{ "timer_settime", 223 },
	{ "timer_gettime", 224 },
	{ "timer_getoverrun", 225 },
	{ "timer_delete", 226 },
	{ "clock_settime", 227 },
	{ "clock_gettime", 228 },
	{ "clock_getres", 229 },
	{ "clock_nanosleep", 230 },
	{ "exit_group", 231 },
	{ "epoll_wait", 232 },
	{ "epoll_ctl", 233 },
	{ "tgkill", 234 },
	{ "utimes", 235 },
	{ "vserver", 236 },
	{ "mbind", 237 },
	{ "set_mempolicy", 238 },
	{ "get_mempolicy", 239 },
	{ "mq_open", 240 },
	{ "mq_unlink", 241 },
	{ "mq_timedsend", 242 },
	{ "mq_timedreceive", 243 },
	{ "mq_notify", 244 },
	{ "mq_getsetattr", 245 },
	{ "kexec_load", 246 },
	{ "waitid", 247 },
	{ "add_key", 248 },
	{ "request_key", 249 },
	{ "keyctl", 250 },
	{ "ioprio_set", 251 },
	{ "ioprio_get", 252 },
	{ "inotify_init", 253 },
	{ "inotify_add_watch", 254 },
	{ "inotify_rm_watch", 255 },
	{ "migrate_pages", 256 },
	{ "openat", 257 },
	{ "mkdirat", 258 },
	{ "mknodat", 259 },
	{ "fchownat", 260 },
	{ "futimesat", 261 },
	{ "newfstatat", 262 },
	{ "unlinkat", 263 },
	{ "renameat", 264 },
	{ "linkat", 265 },
	{ "symlinkat", 266 },
	{ "readlinkat", 267 },
	{ "fchmodat", 268 },
	{ "faccessat", 269 },
	{ "pselect6", 270 },
	{ "ppoll", 271 },
	{ "unshare", 272 },
	{ "set_robust_list", 273 },
	{ "get_robust_list", 274 },
	{ "splice", 275 },
	{ "tee", 276 },
	{ "sync_file_range", 277 },
	{ "vmsplice", 278 },
	{ "move_pages", 279 },
	{ "utimensat", 280 },
	{ "epoll_pwait", 281 },
	{ "signalfd", 282 },
	{ "timerfd_create", 283 },
	{ "eventfd", 284 },
	{ "fallocate", 285 },
	{ "timerfd_settime", 286 },
	{ "timerfd_gettime", 287 },
	{ "accept4", 288 },
	{ "signalfd4", 289 },
	{ "eventfd2", 290 },
	{ "epoll_create1", 291 },
	{ "dup3", 292 },
	{ "pipe2", 293 },
	{ "inotify_init1", 294 },
	{ "preadv", 295 },
	{ "pwritev", 296 },
	{ "rt_tgsigqueueinfo", 297 },
	{ "perf_event_open", 298 },
	{ "recvmmsg", 299 },
	{ "fanotify_init", 300 },
	{ "fanotify_mark", 301 },
	{ "prlimit64", 302 },
	{ "name_to_handle_at", 303 },
	{ "open_by_handle_at", 304 },
	{ "clock_adjtime", 305 },
	{ "syncfs", 306 },
	{ "sendmmsg", 307 },
	{ "setns", 308 },
	{ "getcpu", 309 },
	{ "process_vm_readv", 310 },
	{ "process_vm_writev", 311 },
	{ "kcmp", 312 },
	{ "finit_module", 313 },
	{ "sched_setattr", 314 },
	{ "sched_getattr", 315 },
	{ "renameat2", 316 },
	{ "seccomp", 317 },
	{ "getrandom", 318 },
	{ "memfd_create", 319 },
	{ "kexec_file_load", 320 },
	{ "bpf", 321 },
	{ "execveat", 322 },
	{ "userfaultfd", 323 },
	{ "membarrier", 324 },
	{ "mlock2", 325 },
	{ "copy_file_range", 326 },
	{ "preadv2", 327 },
	{ "pwritev2", 328 },
	{ "pkey_mprotect", 329 },
	{ "pkey_alloc", 330 },
	{ "pkey_free", 331 },
	{ "statx", 332 },
	{ "io_pgetevents", 333 },
	{ "rseq", 334 },
	{ "pidfd_send_signal", 424 },
	{ "io_uring_setup", 425 },
	{ "io_uring_enter", 426 },
	{ "io_uring_register", 427 },
	{ "open_tree", 428 },
	{ "move_mount", 429 },
	{ "fsopen", 430 },
	{ "fsconfig", 431 },
	{ "fsmount", 432 },
	{ "fspick", 433 },
	{ "pidfd_open", 434 },
	{ "clone3", 435 },
	{ "close_range", 436 },
	{ "openat2", 437 },
	{ "pidfd_getfd", 438 },
	{ "faccessat2", 439 },
	{ "process_madvise", 440 },
	{ "epoll_pwait2", 441 },
	{ "mount_setattr", 442 },
	{ "quotactl_fd", 443 },
	{ "landlock_create_ruleset", 444 },
	{ "landlock_add_rule", 445 },
	{ "landlock_restrict_self", 446 },
	{ "memfd_secret", 447 },
	{ "process_mrelease", 448 },
	{ "futex_waitv", 449 },
	{ "set_mempolicy_home_node", 450 },
};

enum { SYSCALL_COUNT = sizeof syscall_table / sizeof syscall_table[0] };

const struct arch_syscall *arch_syscalls(size_t *n)
{
	*n = SYSCALL_COUNT;
	return syscall_table;
}

static int by_number(const void *key, const void *entry)
{
	int64_t nr = *(const int64_t *)key, other = ((const struct arch_syscall *)entry)->nr;
	return nr < other ? -1 : nr > other;
}

const char *arch_syscall_name(int64_t nr)
{
	const struct arch_syscall *s = bsearch(&nr, syscall_table, SYSCALL_COUNT, sizeof *syscall_table, by_number);
	return s ? s->name : NULL;
}

int arch_syscall_number(const char *name)
{
	for (size_t i = 0; name && i < SYSCALL_COUNT; i++)
		if (strcmp(syscall_table[i].name, name) == 0)
			return syscall_table[i].nr;
	return -1;
}

/* futex's operations that wait (FUTEX_WAIT, FUTEX_LOCK_PI,
 * FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI, FUTEX_LOCK_PI2), compared
 * without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME. */
static bool futex_waits(uint64_t futex_op)
{
	unsigned op = (unsigned)futex_op & 127u;
	return op == 0 || op == 6 || op == 9 || op == 11 || op == 13;
}

static bool futex_wakes(uint64_t futex_op)
{
	return ((unsigned)futex_op & 127u) == 1;   /* FUTEX_WAKE */
}

/* Why a thread sits in each call it can sit in for long, and whether the
 * call only waits or gives its CPU away (a thread stopped in it was off
 * the CPU at that instant, or about to leave it). futex is decided by its
 * operation (arch_syscall_waiting, arch_syscall_wait_reason). */
static const struct wait_class {
	int nr;
	bool only_waits;
	const char *reason;
} wait_classes[] = {
	{ 0, false, "read" },              /* read */
	{ 1, false, "write" },             /* write */
	{ 7, true, "poll/epoll" },         /* poll */
	{ 17, false, "read" },             /* pread64 */
	{ 18, false, "write" },            /* pwrite64 */
	{ 19, false, "read" },             /* readv */
	{ 20, false, "write" },            /* writev */
	{ 23, true, "poll/epoll" },        /* select */
	{ 24, true, "yield" },             /* sched_yield: a spin-wait giving its CPU away (parking_lot, before parking) */
	{ 34, true, "signal wait" },       /* pause */
	{ 35, true, "sleep" },             /* nanosleep */
	{ 42, false, "connect" },          /* connect */
	{ 43, true, "accept" },            /* accept */
	{ 44, false, "send" },             /* sendto */
	{ 45, false, "recv" },             /* recvfrom */
	{ 46, false, "send" },             /* sendmsg */
	{ 47, false, "recv" },             /* recvmsg */
	{ 61, true, "child wait" },        /* wait4 */
	{ 65, true, "semaphore" },         /* semop */
	{ 70, true, "message queue" },     /* msgrcv */
	{ 74, false, "fsync" },            /* fsync */
	{ 75, false, "fsync" },            /* fdatasync */
	{ 128, true, "signal wait" },      /* rt_sigtimedwait */
	{ 130, true, "signal wait" },      /* rt_sigsuspend */
	{ 208, true, "aio wait" },         /* io_getevents */
	{ 220, true, "semaphore" },        /* semtimedop */
	{ 230, true, "sleep" },            /* clock_nanosleep */
	{ 232, true, "poll/epoll" },       /* epoll_wait */
	{ 247, true, "child wait" },       /* waitid */
	{ 270, true, "poll/epoll" },       /* pselect6 */
	{ 271, true, "poll/epoll" },       /* ppoll */
	{ 281, true, "poll/epoll" },       /* epoll_pwait */
	{ 288, true, "accept" },           /* accept4 */
	{ 295, false, "read" },            /* preadv */
	{ 296, false, "write" },           /* pwritev */
	{ 299, false, "recv" },            /* recvmmsg */
	{ 307, false, "send" },            /* sendmmsg */
	{ 441, true, "poll/epoll" },       /* epoll_pwait2 */
	{ 449, true, "futex wait" },       /* futex_waitv */
};

static const struct wait_class *wait_class_of(int64_t nr)
{
	for (size_t i = 0; i < sizeof wait_classes / sizeof wait_classes[0]; i++)
		if (wait_classes[i].nr == nr)
			return &wait_classes[i];
	return NULL;
}

const char *arch_syscall_waiting(int64_t nr, uint64_t futex_op)
{
	if (nr == ARCH_SYSCALL_FUTEX)
		return futex_waits(futex_op) ? arch_syscall_name(nr) : NULL;
	const struct wait_class *c = wait_class_of(nr);
	return c && c->only_waits ? arch_syscall_name(nr) : NULL;
}

const char *arch_syscall_wait_reason(int64_t nr, uint64_t futex_op)
{
	if (nr == ARCH_SYSCALL_FUTEX)
		return futex_wakes(futex_op) ? "futex wake" : "futex wait";
	if (nr == -1)
		return "no system call";
	const struct wait_class *c = wait_class_of(nr);
	return c ? c->reason : "other system call";
}

bool arch_syscall_restarts(int64_t result)
{
	return result == -ARCH_ERESTARTSYS || result == -ARCH_ERESTARTNOINTR || result == -ARCH_ERESTARTNOHAND ||
	       result == -ARCH_ERESTART_RESTARTBLOCK;
}

bool arch_syscall_interrupted(int64_t result)
{
	return result == -ARCH_EINTR || (result <= -ARCH_ERESTARTSYS && result >= -ARCH_ERESTART_RESTARTBLOCK);
}
