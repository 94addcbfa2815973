/* A warm start for a native converter (kb.zygote): LD_PRELOAD'ed into the converter with KB_ZYGOTE=1, it lets the
 * converter's shared libraries run their static initializers once (libtorch's: 0.19 s of pnnx's 0.26 s on a small
 * model), then forks one child per job, which runs the converter's own main() with the job's argv, as a fresh
 * process started after those initializers would, and ends without their teardown.
 *
 * A job on stdin: "N\n" and N NUL-terminated fields: cwd, output file, timeout (ms), address-space cap (bytes,
 * 0: none), the number E of environment entries, E entries NAME=value, then argv[0..]. The reply on stdout:
 * "kb.zygote <timed out 0|1> <wait status>\n" (named: a converter that ran without the shim prints no such line). The child has the job's environment, its own session, stdin /dev/null and
 * stdout and stderr in the output file. Without KB_ZYGOTE=1 the converter runs as usual. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;
extern char **environ;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void child(char **f, int n) {
    setsid();
    int out = open(f[1], O_WRONLY | O_CREAT | O_TRUNC, 0644), in = open("/dev/null", O_RDONLY);
    if (out < 0 || in < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    close(in);
    close(out);
    if (f[0][0] && chdir(f[0]) != 0) {
        perror("kb.zygote: chdir");
        _exit(126);
    }
    long long cap = atoll(f[3]);
    if (cap > 0) {
        struct rlimit r = {(rlim_t)cap, (rlim_t)cap};
        setrlimit(RLIMIT_AS, &r);
    }
    int e = atoi(f[4]);
    clearenv(); /* the job's environment, as a fresh process started with it would have (no KB_ZYGOTE, LD_PRELOAD) */
    for (int i = 0; i < e; i++) putenv(f[5 + i]);
    signal(SIGPIPE, SIG_DFL);
    int code = real_main(n - 5 - e, f + 5 + e, environ);
    /* main's own objects (the model, its graphs, its files) are gone when it returns; what exit() would do next is
     * tear down the static state the server built, the same for every job (pnnx: 0.1 s of a 0.17 s conversion). So
     * the streams are flushed and the child ends there: a crash in that teardown alone shows in a fresh run only. */
    fflush(NULL);
    _exit(code);
}

static int serve(void) {
    signal(SIGPIPE, SIG_IGN); /* the host went away: the next write fails and the loop ends */
    for (;;) {
        int n;
        if (scanf("%d", &n) != 1 || getchar() != '\n' || n < 6) return 0;
        char **f = calloc(n + 1, sizeof *f);
        size_t cap;
        for (int i = 0; i < n; i++) {
            cap = 0;
            if (getdelim(&f[i], &cap, '\0', stdin) < 0) return 1;
        }
        fflush(stdout);
        double start = now(), limit = atol(f[2]) / 1000.0;
        int e = atoi(f[4]);
        pid_t pid = e >= 0 && 5 + e < n ? fork() : -1;
        if (pid == 0) child(f, n);
        int status = 0, timed_out = 0;
        if (pid < 0) status = 127 << 8;
        while (pid > 0 && waitpid(pid, &status, WNOHANG) == 0) {
            if (now() - start > limit) {
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                timed_out = 1;
                break;
            }
            struct timespec nap = {0, 2000000};
            nanosleep(&nap, NULL);
        }
        for (int i = 0; i < n; i++) free(f[i]);
        free(f);
        if (printf("kb.zygote %d %d\n", timed_out, status) < 0 || fflush(stdout) != 0) return 0;
    }
}

static int zygote_main(int argc, char **argv, char **envp) {
    const char *on = getenv("KB_ZYGOTE");
    if (!on || strcmp(on, "1") != 0) return real_main(argc, argv, envp);
    return serve();
}

/* The converter links glibc's original symbol version (x86_64: GLIBC_2.2.5); wrap it and hand glibc our main. */
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end) {
    typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
    start_fn next = (start_fn)dlvsym(RTLD_NEXT, "__libc_start_main", "GLIBC_2.2.5");
    if (!next) next = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    real_main = main;
    return next(zygote_main, argc, argv, init, fini, rtld_fini, stack_end);
}
