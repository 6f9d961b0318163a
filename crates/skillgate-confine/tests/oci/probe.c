/* probe: makes the system calls named on its command line with harmless arguments and
 * prints one line per call, "NAME ret=R" or "NAME errno=E". skillgate-confine's tests run
 * it (linked statically) under a seccomp filter, natively and inside runc, to show which
 * calls the filter lets through. Every call is made so that, were it allowed, it would
 * fail harmlessly or do nothing (bad pointers, missing paths, invalid flags).
 *
 *   gcc -static -O2 -o probe probe.c -lpthread
 *   ./probe getpid ptrace clone_newuser socket_inet thread
 *   ./probe loop 1000000     (benchmark: N getppid calls, prints "loop ns=TOTAL")
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *thread_main(void *arg) { return arg; }

/* clone without a stack behaves like fork: the child exits at once. */
static long do_clone(unsigned long flags) {
    long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
    if (r == 0) _exit(0);
    if (r > 0) waitpid((pid_t)r, NULL, 0);
    return r;
}

static long do_socket(int family, int type) {
    long r = syscall(SYS_socket, family, type, 0);
    if (r >= 0) close((int)r);
    return r;
}

static long call(const char *n) {
    if (!strcmp(n, "getpid")) return syscall(SYS_getpid);
    if (!strcmp(n, "ptrace")) return syscall(SYS_ptrace, -1L, 0, 0, 0);
    if (!strcmp(n, "process_vm_readv")) return syscall(SYS_process_vm_readv, getpid(), 0, 0, 0, 0, 0);
    if (!strcmp(n, "process_vm_writev")) return syscall(SYS_process_vm_writev, getpid(), 0, 0, 0, 0, 0);
    if (!strcmp(n, "mount")) return syscall(SYS_mount, 0, 0, 0, 0, 0);
    if (!strcmp(n, "umount2")) return syscall(SYS_umount2, "/nonexistent-skillgate", 0);
    if (!strcmp(n, "pivot_root")) return syscall(SYS_pivot_root, "/nonexistent-a", "/nonexistent-b");
    if (!strcmp(n, "chroot")) return syscall(SYS_chroot, "/nonexistent-skillgate");
    if (!strcmp(n, "unshare")) return syscall(SYS_unshare, 0);
    if (!strcmp(n, "setns")) return syscall(SYS_setns, -1, 0);
    if (!strcmp(n, "bpf")) return syscall(SYS_bpf, -1, 0, 0);
    if (!strcmp(n, "perf_event_open")) return syscall(SYS_perf_event_open, 0, 0, -1, -1, 0);
    if (!strcmp(n, "keyctl")) return syscall(SYS_keyctl, -1, 0, 0, 0, 0);
    if (!strcmp(n, "add_key")) return syscall(SYS_add_key, 0, 0, 0, 0, 0);
    if (!strcmp(n, "request_key")) return syscall(SYS_request_key, 0, 0, 0, 0);
    if (!strcmp(n, "userfaultfd")) return syscall(SYS_userfaultfd, -1);
    if (!strcmp(n, "io_uring_setup")) return syscall(SYS_io_uring_setup, 0, 0);
    if (!strcmp(n, "io_uring_enter")) return syscall(SYS_io_uring_enter, -1, 0, 0, 0, 0, 0);
    if (!strcmp(n, "io_uring_register")) return syscall(SYS_io_uring_register, -1, 0, 0, 0);
    if (!strcmp(n, "kexec_load")) return syscall(SYS_kexec_load, 0, 0, 0, -1L);
    if (!strcmp(n, "kexec_file_load")) return syscall(SYS_kexec_file_load, -1, -1, 0, 0, -1L);
    if (!strcmp(n, "init_module")) return syscall(SYS_init_module, 0, 0, 0);
    if (!strcmp(n, "finit_module")) return syscall(SYS_finit_module, -1, 0, 0);
    if (!strcmp(n, "delete_module")) return syscall(SYS_delete_module, 0, 0);
    if (!strcmp(n, "reboot")) return syscall(SYS_reboot, 0, 0, 0, 0);
    if (!strcmp(n, "swapon")) return syscall(SYS_swapon, "/nonexistent-skillgate", 0);
    if (!strcmp(n, "swapoff")) return syscall(SYS_swapoff, "/nonexistent-skillgate");
    if (!strcmp(n, "acct")) return syscall(SYS_acct, "/nonexistent-skillgate");
    if (!strcmp(n, "open_by_handle_at")) return syscall(SYS_open_by_handle_at, -1, 0, 0);
    if (!strcmp(n, "personality")) return syscall(SYS_personality, 0xffffffffUL);
    if (!strcmp(n, "clone3")) return syscall(SYS_clone3, 0, 0);
    if (!strcmp(n, "clone_fork")) return do_clone(0);
    if (!strcmp(n, "clone_newuser")) return do_clone(CLONE_NEWUSER);
    if (!strcmp(n, "clone_newnet")) return do_clone(CLONE_NEWNET);
    if (!strcmp(n, "clone_newns")) return do_clone(CLONE_NEWNS);
    if (!strcmp(n, "socket_unix")) return do_socket(AF_UNIX, SOCK_STREAM);
    if (!strcmp(n, "socket_inet")) return do_socket(AF_INET, SOCK_STREAM);
    if (!strcmp(n, "socket_inet6")) return do_socket(AF_INET6, SOCK_DGRAM);
    if (!strcmp(n, "socket_netlink")) return do_socket(AF_NETLINK, SOCK_RAW);
    if (!strcmp(n, "socket_packet")) return do_socket(AF_PACKET, SOCK_RAW);
    if (!strcmp(n, "thread")) {
        pthread_t t;
        int e = pthread_create(&t, NULL, thread_main, NULL);
        if (e) { errno = e; return -1; }
        pthread_join(t, NULL);
        return 0;
    }
    fprintf(stderr, "probe: unknown call %s\n", n);
    _exit(2);
}

/* N raw getppid calls (never cached by libc), timed with the monotonic clock. */
static int bench_loop(long n) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) syscall(SYS_getppid);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long long ns = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
    printf("loop ns=%lld\n", ns);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "loop")) return bench_loop(atol(argv[2]));
    for (int i = 1; i < argc; i++) {
        errno = 0;
        long r = call(argv[i]);
        if (r < 0) printf("%s errno=%d\n", argv[i], errno);
        else printf("%s ret=%ld\n", argv[i], r);
        fflush(stdout);
    }
    return 0;
}
