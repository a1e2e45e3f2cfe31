/*
 * htmcp-spawn: the one program the server spawns, once (--serve, below);
 * every command runs in a process tree it creates. It replaces a chain of
 * six system tools (unshare, setsid, setpriv, timeout, prlimit, a second
 * setpriv) and keeps each of their jobs:
 *
 *   outer (the serving        parent-death signal; creates the call's PID
 *   helper, for each of       namespace and its init in one clone() (as
 *   its calls)                root: CLONE_NEWPID; else with a user
 *                             namespace mapping only the server's uid),
 *                             sharing its memory until the init executes
 *                             this program anew (see start_init()), then
 *                             only waits: the server's kill request or the
 *                             call's backstop SIGKILL the init.
 *   init (pid 1 inside,       enters the call's working folder; a new
 *   --as-init)                session; drops to --setuid/--setgid
 *                             (groups cleared), sets its own parent-death
 *                             signal (after the uid change, which would
 *                             clear it), then either execs bwrap
 *                             (--init-exec; the --copy-in files open for
 *                             its --file copies) or forks the command (or
 *                             runs a plan) and reaps until it ends. When
 *                             it exits the kernel kills and reaps
 *                             everything left in the namespace, daemons
 *                             included, and only then is the init itself
 *                             reaped: its reaping means the whole tree is
 *                             gone.
 *   --inner (inside bwrap)    pid 1 of bwrap's namespace (--as-pid-1), so
 *                             the init there: vforks the command (rlimits,
 *                             no_new_privs, closed descriptors, exec) at
 *                             pid 2 and reaps until it ends, or runs a plan
 *                             in the jail's view of the files. With
 *                             --egress=PORT:SOCKET it also starts the
 *                             egress forwarder (see start_forwarder()).
 *                             With --request it first waits for the call
 *                             on stdin (read_request()): a sandbox made
 *                             before its call, whose backstop starts
 *                             only at the go (--backstop-at-go).
 *
 * Exit status: the command's, 128+N when it died of signal N, 137 when the
 * tree was killed on request or by the backstop, 125 when the containment
 * could not be set up, 126/127 when the command could not be executed. Every
 * message it prints starts with "htmcp-spawn: ".
 *
 * Plans (--plan): stages joined by pipes, sequences (; && ||), cd and
 * redirections, read from stdin as NUL-terminated tokens: see run_plan().
 *
 * --serve: one long-lived helper for all of a server's calls, the outer of
 * each: it reads the call's working folder, environment and the arguments
 * above from the server's request and creates its init: see serve().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <grp.h>
#include <unistd.h>

#define NAME "htmcp-spawn"
#define EXIT_SETUP 125
#define MAX_RLIMITS 8
#define MAX_COPIES 16
#define FIRST_COPY_FD 3
#define MAX_PLAN_BYTES (1 << 20)
#define MAX_PLAN_STAGES 64
#define MAX_REQUEST_BYTES (1 << 20)
#define MAX_REQUEST_ENV 4096
#define OUTPUT_PIPE_BYTES (256 * 1024)
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char **environ;

struct limit {
  int resource;
  struct rlimit value;
};

struct options {
  int pidns;        /* 0: no namespace (--inner), 1: root, 2: user */
  long uid, gid;    /* -1: keep */
  long backstop_ms; /* 0: none */
  int backstop_at_go; /* the backstop's milliseconds come with the go (a B frame) */
  int request;        /* --inner --request: the call arrives on stdin */
  int init_exec;    /* the namespace's init execs argv itself (bwrap) */
  int plan;
  int go;           /* 0: start at once, 1: after the go byte (stdin follows), 2: same, then /dev/null */
  struct limit limits[MAX_RLIMITS];
  int nlimits;
  long egress_port; /* 0: no forwarder */
  const char *egress_socket;
  const char *copies[MAX_COPIES]; /* --copy-in: opened at FIRST_COPY_FD onwards for bwrap */
  int ncopies;
  char **argv;
  const char *invalid; /* the first bad option (see invalid()), or NULL */
};

static void say(const char *fmt, ...) {
  /* Room for a whole path (PATH_MAX), which classify.ts looks for in the line. */
  char line[4096 + 512] = NAME ": ";
  size_t at = sizeof NAME + 1;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line + at, sizeof line - at - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  at += (size_t)n < sizeof line - at - 2 ? (size_t)n : sizeof line - at - 2;
  line[at++] = '\n';
  /* One write: messages from concurrent stages never interleave mid-line. */
  ssize_t ignored = write(2, line, at);
  (void)ignored;
}

static _Noreturn void setup_failed(const char *what) {
  say("%s: %s", what, strerror(errno));
  _exit(EXIT_SETUP);
}

/*
 * Only stdin, stdout and stderr may reach a command: a descriptor the
 * server left open by mistake (a log, a socket, a secret file) would
 * otherwise be readable by whatever runs. close_range needs Linux 5.9; the
 * loop is the fallback.
 */
static void close_above_stderr(void) {
  if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
  struct rlimit nofile;
  long top = getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY
                 ? (long)nofile.rlim_cur
                 : 65536;
  for (long fd = 3; fd < top; fd++) close((int)fd);
}

/*
 * One signal's disposition back to SIG_DFL, through the kernel's own call:
 * the C library's sigaction() refuses the signals it keeps for itself (32
 * and 33 in glibc, 32 to 34 in musl), yet SIG_IGN there survives exec like
 * anywhere else, and Deno starts its children with 32 and 33 ignored.
 * SIGKILL and SIGSTOP are refused by the kernel and are never ignored anyway.
 */
#define KERNEL_SIGNALS 64
struct kernel_sigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)(void);
  unsigned long mask;
};
static void default_disposition(int sig) {
  /* All zeros, whatever the architecture's field order: SIG_DFL, no flags, an empty mask. */
  struct kernel_sigaction action = {.handler = SIG_DFL};
  syscall(SYS_rt_sigaction, sig, &action, NULL, sizeof action.mask);
}

/*
 * Set once every disposition of this process is SIG_DFL: in a serving
 * helper's fork, which inherits the defaults serve() set and restores the
 * one it ignores. Everything forked from there inherits them too, so a
 * command it starts has only its mask to clear (64 system calls fewer on
 * each call's way to exec). A program executed anew (the inner helper in
 * bwrap) starts at 0 and sets every one itself.
 */
static int dispositions_default;

/* A command starts with no blocked and no ignored signal: both survive exec. */
static void reset_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (dispositions_default) return;
  for (int sig = 1; sig <= KERNEL_SIGNALS; sig++) default_disposition(sig);
}

static int exec_status(int err) { return err == ENOENT || err == ENOTDIR ? 127 : 126; }

/*
 * --go / --go-null: nothing the caller chose runs before the server says so.
 * The server spawns us while the call's attempt record is still being made
 * durable (so the spawn and the namespace setup overlap the fdatasync) and
 * writes one byte to stdin only once it is: until then no program of the
 * call has been executed. End of file instead (the record could not be
 * written, or the server is gone) ends everything here, having run nothing.
 * --go-null: the call has no stdin text, so the command reads /dev/null, as
 * it would without a go.
 */
#define GO_BYTE 'g'
static void await_go(const struct options *o) {
  if (o->go == 0) return;
  char byte = 0;
  ssize_t n;
  do n = read(0, &byte, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1 || byte != GO_BYTE) _exit(EXIT_SETUP);
  if (o->go == 2) {
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0) setup_failed("/dev/null");
    close(null);
  }
}

/* Applies the limits and the exec-time hardening, then runs argv; never returns. */
static _Noreturn void exec_command(const struct options *o, char **argv) {
  await_go(o);
  for (int i = 0; i < o->nlimits; i++) {
    if (setrlimit(o->limits[i].resource, &o->limits[i].value) != 0) setup_failed("setrlimit");
  }
  /* No setuid/file-capability binary can gain privileges from here on. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) setup_failed("no_new_privs");
  reset_signals();
  close_above_stderr();
  execve(argv[0], argv, environ);
  int err = errno;
  say("failed to execute %s: %s", argv[0], strerror(err));
  _exit(exec_status(err));
}

static int encode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return EXIT_SETUP;
}

/* ---- plans -------------------------------------------------------------- */

struct plan {
  /* Every token ends in a NUL, so there are at most as many as plan bytes. */
  char *tokens[MAX_PLAN_BYTES];
  int count, at;
  const char *nonce;
  const char *jail;
  int jailfd;
};

static char plan_bytes[MAX_PLAN_BYTES + 1];
static struct plan the_plan;

static const char *next_token(struct plan *p) {
  if (p->at >= p->count) {
    errno = EINVAL;
    setup_failed("plan ended early");
  }
  return p->tokens[p->at++];
}

static long next_number(struct plan *p, long max) {
  const char *text = next_token(p);
  char *end;
  errno = 0;
  long n = strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || n < 0 || n > max) {
    errno = EINVAL;
    setup_failed("plan number");
  }
  return n;
}

/*
 * Opens a path of the plan below the jail: openat2 with RESOLVE_BENEATH
 * resolves every component (symlinks included) without ever leaving the
 * jail, so a symlink swapped in after the server's path check cannot point
 * a redirection or a cd outside it. /dev/null is the one path outside.
 */
static int open_in_jail(const struct plan *p, const char *path, int flags) {
  if (strcmp(path, "/dev/null") == 0) return open(path, flags | O_CLOEXEC, 0666);
  size_t n = strlen(p->jail);
  const char *rel;
  if (strcmp(path, p->jail) == 0) rel = ".";
  else if (strncmp(path, p->jail, n) == 0 && path[n] == '/') rel = path + n + 1;
  else {
    errno = EXDEV;
    return -1;
  }
  struct open_how how = {0};
  how.flags = (unsigned long long)(flags | O_CLOEXEC);
  how.mode = (flags & O_CREAT) ? 0666 : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return (int)syscall(SYS_openat2, p->jailfd, rel[0] ? rel : ".", &how, sizeof how);
}

/* Applies one stage's redirections, in order, as a shell does. In the stage's child. */
static void apply_redirect(const struct plan *p, const char *kind) {
  if (strcmp(kind, "2>&1") == 0) {
    if (dup2(1, 2) < 0) _exit(1);
    return;
  }
  if (strcmp(kind, "1>&2") == 0) {
    if (dup2(2, 1) < 0) _exit(1);
    return;
  }
  int target, flags;
  if (strcmp(kind, "<") == 0) target = 0, flags = O_RDONLY;
  else if (strcmp(kind, ">") == 0) target = 1, flags = O_WRONLY | O_CREAT | O_TRUNC;
  else if (strcmp(kind, ">>") == 0) target = 1, flags = O_WRONLY | O_CREAT | O_APPEND;
  else if (strcmp(kind, "2>") == 0) target = 2, flags = O_WRONLY | O_CREAT | O_TRUNC;
  else if (strcmp(kind, "2>>") == 0) target = 2, flags = O_WRONLY | O_CREAT | O_APPEND;
  else {
    say("unknown redirection %s", kind);
    _exit(1);
  }
  struct plan *mp = (struct plan *)p;
  const char *file = next_token(mp);
  int fd = open_in_jail(p, file, flags | O_NOCTTY);
  if (fd < 0) {
    say("%s: %s", file, strerror(errno));
    _exit(1);
  }
  if (dup2(fd, target) < 0) _exit(1);
  close(fd);
}

struct stage {
  char **argv;
  int redirect_at, redirects;
  pid_t pid;
  int status; /* -1: not run */
};

static struct stage stages[MAX_PLAN_STAGES];
static int nstages;
static char status_text[MAX_PLAN_STAGES * 16 + 256];
static struct options plan_limits;

/* Parses one stage (after its "stage" token): PATH ARGC ARG... NREDIR (KIND [FILE])... */
static struct stage *parse_stage(struct plan *p) {
  if (nstages >= MAX_PLAN_STAGES) {
    errno = E2BIG;
    setup_failed("plan stages");
  }
  struct stage *s = &stages[nstages++];
  const char *path = next_token(p);
  long argc = next_number(p, 4096);
  /* argv is built in place: the path as argv[0], then the arguments. */
  char **argv = calloc((size_t)argc + 2, sizeof *argv);
  if (argv == NULL) setup_failed("calloc");
  argv[0] = (char *)path;
  for (long i = 0; i < argc; i++) argv[i + 1] = (char *)next_token(p);
  s->argv = argv;
  s->redirects = (int)next_number(p, 64);
  s->redirect_at = p->at;
  for (int i = 0; i < s->redirects; i++) {
    const char *kind = next_token(p);
    if (strcmp(kind, "2>&1") != 0 && strcmp(kind, "1>&2") != 0) next_token(p);
  }
  s->status = -1;
  return s;
}

/* Reaps until every stage in [first, first+n) has ended; orphans are reaped on the way. */
static void wait_stages(int first, int n) {
  int left = n;
  while (left > 0) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = first; i < first + n; i++) {
      if (stages[i].pid == pid) {
        stages[i].status = encode_status(status);
        left--;
      }
    }
  }
}

/* Runs one pipeline of `count` stages; returns the last stage's status. */
static int run_pipeline(struct plan *p, int first, int count) {
  int in = -1;
  for (int i = first; i < first + count; i++) {
    int fds[2] = {-1, -1};
    if (i + 1 < first + count && pipe2(fds, O_CLOEXEC) != 0) setup_failed("pipe");
    pid_t pid = fork();
    if (pid < 0) setup_failed("fork");
    if (pid == 0) {
      if (in >= 0 && dup2(in, 0) < 0) _exit(1);
      if (fds[1] >= 0 && dup2(fds[1], 1) < 0) _exit(1);
      p->at = stages[i].redirect_at;
      for (int r = 0; r < stages[i].redirects; r++) apply_redirect(p, next_token(p));
      exec_command(&plan_limits, stages[i].argv);
    }
    stages[i].pid = pid;
    if (in >= 0) close(in);
    if (fds[1] >= 0) close(fds[1]);
    in = fds[0];
  }
  wait_stages(first, count);
  return stages[first + count - 1].status;
}

/*
 * A plan, read from stdin (the command never sees it: stdin becomes
 * /dev/null before the first stage starts):
 *
 *   htmcp-plan 1 NONCE JAIL  then elements separated by ";", "&&" or "||":
 *   cd DIR                   | pipeline K (stage PATH ARGC ARG... NREDIR REDIR...)xK
 *   end
 *
 * Every stage's status is reported on stderr after the last stage has
 * ended and every process left in the namespace has been killed and
 * reaped, as one final line "\0htmcp-status NONCE S1 S2 ...\n" (a status,
 * or "-" for a stage a sequence skipped; a cd counts as a stage). No stage
 * can append after it, and a stage cannot write a record the server
 * accepts without the nonce, which it has no way to read: not on its stdin,
 * argv or environment, and this process is not dumpable (no ptrace, no
 * /proc/PID/mem for a command of the same uid).
 */
static _Noreturn void run_plan(const struct options *o) {
  struct plan *p = &the_plan;
  /* kill(-1) below must only ever reach a namespace of our own: pid 1 is
     its init (mode none), pid 2 the first process under bwrap's init. */
  if (getpid() > 2) {
    errno = EPERM;
    setup_failed("a plan runs only inside a new PID namespace");
  }
  size_t len = 0;
  for (;;) {
    ssize_t n = read(0, plan_bytes + len, MAX_PLAN_BYTES - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) setup_failed("read plan");
    if (n == 0) break;
    len += (size_t)n;
    if (len == MAX_PLAN_BYTES) {
      errno = E2BIG;
      setup_failed("plan");
    }
  }
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || dup2(null, 0) < 0) setup_failed("/dev/null");
  close(null);
  for (size_t at = 0; at < len;) {
    p->tokens[p->count++] = plan_bytes + at;
    at += strlen(plan_bytes + at) + 1;
  }
  if (strcmp(next_token(p), "htmcp-plan") != 0 || strcmp(next_token(p), "1") != 0) {
    errno = EINVAL;
    setup_failed("plan header");
  }
  p->nonce = next_token(p);
  p->jail = next_token(p);
  p->jailfd = open(p->jail, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (p->jailfd < 0) setup_failed(p->jail);
  plan_limits = *o;
  /* A plan's go is its own arrival on stdin: its stages never wait for another. */
  plan_limits.go = 0;

  int last = 0, skip = 0;
  for (;;) {
    const char *word = next_token(p);
    if (strcmp(word, "end") == 0) break;
    if (strcmp(word, ";") == 0) skip = 0;
    else if (strcmp(word, "&&") == 0) skip = last != 0;
    else if (strcmp(word, "||") == 0) skip = last == 0;
    else if (strcmp(word, "cd") == 0) {
      if (nstages >= MAX_PLAN_STAGES) {
        errno = E2BIG;
        setup_failed("plan stages");
      }
      struct stage *s = &stages[nstages++];
      const char *dir = next_token(p);
      s->status = -1;
      if (!skip) {
        int fd = open_in_jail(p, dir, O_RDONLY | O_DIRECTORY);
        if (fd < 0 || fchdir(fd) != 0) {
          say("cd %s: %s", dir, strerror(errno));
          s->status = 1;
        } else s->status = 0;
        if (fd >= 0) close(fd);
        last = s->status;
      }
    } else if (strcmp(word, "pipeline") == 0) {
      int count = (int)next_number(p, MAX_PLAN_STAGES);
      int first = nstages;
      for (int i = 0; i < count; i++) {
        if (strcmp(next_token(p), "stage") != 0) {
          errno = EINVAL;
          setup_failed("plan stage");
        }
        parse_stage(p);
      }
      if (!skip && count > 0) last = run_pipeline(p, first, count);
    } else {
      errno = EINVAL;
      setup_failed("plan element");
    }
  }
  /* Whatever a stage left behind (a daemon) dies now, before the report. */
  kill(-1, SIGKILL);
  while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
  }
  size_t at = (size_t)snprintf(status_text, sizeof status_text, "%chtmcp-status %s", 0, p->nonce);
  for (int i = 0; i < nstages && at < sizeof status_text - 16; i++) {
    if (stages[i].status < 0) at += (size_t)snprintf(status_text + at, 16, " -");
    else at += (size_t)snprintf(status_text + at, 16, " %d", stages[i].status);
  }
  status_text[at++] = '\n';
  ssize_t ignored = write(2, status_text, at);
  (void)ignored;
  _exit(last & 0xff);
}

/* ---- egress forwarder --------------------------------------------------- */

/*
 * [sandbox] network = "allowlist": the sandbox has a network namespace of
 * its own with nothing in it but loopback, and the egress proxy's Unix
 * socket bound in (read-only) at SOCKET. Ordinary tools speak HTTP proxy
 * over TCP (HTTP_PROXY=http://127.0.0.1:PORT), so a forwarder listens on
 * the sandbox's loopback and relays each connection to the socket, bytes
 * unchanged.
 *
 * It needs no trust: it runs as the command's uid with the command's view,
 * and the command could connect to the socket itself, or kill the forwarder
 * and listen on the port instead. Every decision (which host, which port)
 * is the proxy's, outside the sandbox; the forwarder only moves bytes. It
 * listens before the command starts (no race on the first connection),
 * holds none of the command's descriptors (stdin/stdout/stderr are
 * /dev/null, so the server's pipes close when the command's do), and is
 * reparented to the namespace's init by a double fork, so the command never
 * sees an unexpected child. It dies with the PID namespace.
 */
static void relay(int a, int b) {
  static char buf[65536];
  struct pollfd fds[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
  int open_dirs = 2;
  while (open_dirs > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      int to = i == 0 ? b : a;
      if (n <= 0) {
        /* One direction ended: pass the end on, keep the other open. */
        shutdown(to, SHUT_WR);
        fds[i].fd = -1;
        open_dirs--;
        continue;
      }
      for (ssize_t at = 0; at < n;) {
        ssize_t w = write(to, buf + at, (size_t)(n - at));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        at += w;
      }
    }
  }
}

static _Noreturn void forward_loop(int listener, const char *socket_path) {
  signal(SIGCHLD, SIG_IGN); /* connection children are reaped by the kernel */
  dispositions_default = 0;
  for (;;) {
    int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) continue;
      _exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
      close(listener);
      int up = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      struct sockaddr_un addr = {.sun_family = AF_UNIX};
      strncpy(addr.sun_path, socket_path, sizeof addr.sun_path - 1);
      if (up < 0 || connect(up, (struct sockaddr *)&addr, sizeof addr) != 0) _exit(1);
      relay(client, up);
      _exit(0);
    }
    close(client);
  }
}

/* The forwarder's listening socket on the sandbox's loopback: connections wait in its backlog. */
static int open_listener(const struct options *o) {
  if (strlen(o->egress_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
    errno = ENAMETOOLONG;
    setup_failed("--egress socket");
  }
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) setup_failed("egress socket");
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->egress_port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0) setup_failed("egress bind");
  if (listen(listener, 64) != 0) setup_failed("egress listen");
  return listener;
}

static void start_forwarder(const struct options *o, int listener) {
  pid_t middle = fork();
  if (middle < 0) setup_failed("fork");
  if (middle == 0) {
    if (fork() != 0) _exit(0);
    reset_signals();
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(1);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    forward_loop(listener, o->egress_socket);
  }
  while (waitpid(middle, NULL, 0) < 0 && errno == EINTR) {
  }
  close(listener);
}

/* ---- options ------------------------------------------------------------ */

/*
 * A bad option: parse() notes the first one and goes on, and its caller
 * fails the call on it with EINVAL. The serving helper parses every
 * request itself (it creates the call's namespace), so a bad request must
 * fail that call, never end the helper and every other call with it.
 */
static void invalid(struct options *o, const char *what) {
  if (o->invalid == NULL) o->invalid = what;
}

/* A decimal count, no sign: 1 with *out set, or 0. */
static int decimal(const char *text, long *out) {
  char *end;
  errno = 0;
  long n = strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || n < 0 || text[0] == '\0') return 0;
  *out = n;
  return 1;
}

static long number(struct options *o, const char *text, const char *what) {
  long n = 0;
  if (!decimal(text, &n)) invalid(o, what);
  return n;
}

/* A decimal rlimit value up to `stop`, no sign. */
static rlim_t rl_number(struct options *o, const char *text, char stop) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(text, &end, 10);
  if (errno != 0 || *end != stop || end == text || text[0] == '-') invalid(o, "--rlimit");
  return (rlim_t)n;
}

/*
 * --rlimit=NAME=SOFT:HARD with NAME one of cpu, as, nproc, fsize, nofile.
 * Reads `spec` without changing it, as parse() reads every option: a
 * contained call's options are parsed again by its init (--as-init).
 */
static void parse_rlimit(struct options *o, const char *spec) {
  static const struct {
    const char *name;
    int resource;
  } names[] = {{"cpu", RLIMIT_CPU}, {"as", RLIMIT_AS}, {"nproc", RLIMIT_NPROC},
               {"fsize", RLIMIT_FSIZE}, {"nofile", RLIMIT_NOFILE}};
  const char *eq = strchr(spec, '='), *colon = eq ? strchr(eq, ':') : NULL;
  if (eq == NULL || colon == NULL || o->nlimits >= MAX_RLIMITS) {
    invalid(o, "--rlimit");
    return;
  }
  size_t length = (size_t)(eq - spec);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strlen(names[i].name) == length && strncmp(spec, names[i].name, length) == 0) {
      struct limit *l = &o->limits[o->nlimits++];
      l->resource = names[i].resource;
      l->value.rlim_cur = rl_number(o, eq + 1, ':');
      l->value.rlim_max = rl_number(o, colon + 1, '\0');
      return;
    }
  }
  invalid(o, "--rlimit");
}

static void parse(struct options *o, int argc, char **argv) {
  o->uid = o->gid = -1;
  int i = 1;
  for (; i < argc; i++) {
    char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(a, "--pidns=root") == 0) o->pidns = 1;
    else if (strcmp(a, "--pidns=user") == 0) o->pidns = 2;
    else if (strcmp(a, "--inner") == 0) o->pidns = 0;
    else if (strcmp(a, "--init-exec") == 0) o->init_exec = 1;
    else if (strcmp(a, "--plan") == 0) o->plan = 1;
    else if (strcmp(a, "--go") == 0) o->go = 1;
    else if (strcmp(a, "--go-null") == 0) o->go = 2;
    else if (strncmp(a, "--setuid=", 9) == 0) o->uid = number(o, a + 9, "--setuid");
    else if (strncmp(a, "--setgid=", 9) == 0) o->gid = number(o, a + 9, "--setgid");
    else if (strncmp(a, "--backstop-ms=", 14) == 0) o->backstop_ms = number(o, a + 14, "--backstop-ms");
    else if (strcmp(a, "--backstop-at-go") == 0) o->backstop_at_go = 1;
    else if (strcmp(a, "--request") == 0) o->request = 1;
    else if (strncmp(a, "--rlimit=", 9) == 0) parse_rlimit(o, a + 9);
    else if (strncmp(a, "--copy-in=", 10) == 0) {
      if (o->ncopies == MAX_COPIES || a[10] != '/') invalid(o, "--copy-in");
      else o->copies[o->ncopies++] = a + 10;
    }
    else if (strncmp(a, "--egress=", 9) == 0) {
      /* --egress=PORT:SOCKET */
      const char *colon = strchr(a + 9, ':');
      if (colon == NULL || colon[1] != '/') {
        invalid(o, "--egress");
        continue;
      }
      char *end;
      errno = 0;
      long port = strtol(a + 9, &end, 10);
      if (errno != 0 || end != colon || a[9] < '0' || a[9] > '9' || port < 1 || port > 65535) {
        invalid(o, "--egress port");
      }
      o->egress_port = port;
      o->egress_socket = colon + 1;
    }
    else invalid(o, a);
  }
  o->argv = argv + i;
  if (o->request) {
    /* The request brings the command (or the plan) and is the go itself. */
    if (o->pidns != 0 || o->plan || o->go != 0 || o->argv[0] != NULL) {
      invalid(o, "--request is alone after --inner (the call arrives on stdin)");
    }
    return;
  }
  if (o->backstop_at_go && o->backstop_ms != 0) invalid(o, "--backstop-at-go with --backstop-ms");
  if (o->init_exec && o->go != 0) invalid(o, "--go with --init-exec (a sandbox's go is its request)");
  if (o->plan && o->go != 0) invalid(o, "--go with --plan (a plan starts when it arrives on stdin)");
  if (!o->plan && o->argv[0] == NULL) invalid(o, "no command after --");
  if ((o->uid < 0) != (o->gid < 0)) invalid(o, "--setuid and --setgid go together");
  /* Only bwrap reads them (--file FD), and it closes each once copied. */
  if (o->ncopies > 0 && !o->init_exec) invalid(o, "--copy-in without --init-exec");
  /* Only inside the sandbox's own network namespace. */
  if (o->pidns != 0 && o->egress_port != 0) invalid(o, "--egress without --inner");
}

/* parse(), ending the process on a bad option: for a process of one call. */
static void parse_or_fail(struct options *o, int argc, char **argv) {
  parse(o, argc, argv);
  if (o->invalid != NULL) {
    errno = EINVAL;
    setup_failed(o->invalid);
  }
}

/* ---- request ------------------------------------------------------------ */

/* Eight hex digits (a frame's id or length, a sandbox request's length), no sign or space. */
static int hex_field(const char *text, unsigned long *out) {
  char field[9];
  memcpy(field, text, 8);
  field[8] = '\0';
  char *end;
  errno = 0;
  *out = strtoul(field, &end, 16);
  return errno == 0 && *end == '\0' && field[0] != '-' && field[0] != '+' && field[0] != ' ';
}

static char *request_env[MAX_REQUEST_ENV + 1];

/*
 * A call's request: the working folder, the count of environment entries,
 * the entries, then the arguments this program would otherwise have been
 * given (options, "--", the command), as NUL-terminated tokens, `length`
 * bytes in all. The server alone writes it (on an idle helper's stdin, or
 * in a serving helper's frame); it is what it would have put in argv, so it
 * is trusted as argv is, and parsed by the same parse().
 */
struct request {
  const char *cwd;
  char **env;  /* NULL-terminated, into the request's bytes */
  int argc;
  char **argv; /* argv[0] is this program, as parse() expects */
};

/* split_request() but for errno, which the next call of decimal() may change. */
static const char *split_tokens(char *bytes, size_t length, char *self, struct request *r) {
  if (length == 0 || length > MAX_REQUEST_BYTES || bytes[length - 1] != '\0') {
    return "request (empty, too long, or the last token is not terminated)";
  }
  /* Tokens: every NUL ends one; the buffer ends with one. */
  static char *tokens[MAX_REQUEST_BYTES / 2 + 2];
  int count = 0;
  for (size_t at = 0; at < length;) {
    tokens[count++] = bytes + at;
    at += strlen(bytes + at) + 1;
  }
  if (count < 2) return "request (no working folder or environment count)";
  long entries = 0;
  if (!decimal(tokens[1], &entries) || entries > MAX_REQUEST_ENV || 2 + entries > count) {
    return "request environment count";
  }
  for (long i = 0; i < entries; i++) request_env[i] = tokens[2 + i];
  request_env[entries] = NULL;
  /* parse() reads from index 1: our own name goes first. */
  r->cwd = tokens[0];
  r->env = request_env;
  r->argc = count - 2 - (int)entries + 1;
  r->argv = tokens + 2 + entries - 1;
  r->argv[0] = self;
  tokens[count] = NULL;
  return NULL;
}

/*
 * Splits a request into its parts, changing nothing of the process: the
 * serving helper splits each call's request before it creates the call's
 * namespace. Returns NULL, or what is wrong with it (errno EINVAL). The
 * parts point into `bytes` and into static arrays that the next split
 * reuses: a call's process has its own copy from its fork or clone.
 */
static const char *split_request(char *bytes, size_t length, char *self, struct request *r) {
  const char *bad = split_tokens(bytes, length, self, r);
  if (bad != NULL) errno = EINVAL;
  return bad;
}

/* The request's environment and working folder become this process's. */
static void enter_request(const struct request *r) {
  environ = r->env;
  /* What Deno's spawn did for the cwd: a folder gone since the call was
     checked ends the call here, before anything starts. */
  if (chdir(r->cwd) != 0) {
    say("chdir %s: %s", r->cwd, strerror(errno));
    _exit(EXIT_SETUP);
  }
}

/*
 * --inner --request: a sandbox made ahead of its call. bwrap has set up
 * everything that is the same for every call; what the call is (its
 * working folder, environment, rlimits, the command or --plan) arrives on
 * stdin only at its go, once the call's attempt record is durable: 'p' or
 * 'n' (the command's stdin: what follows on this pipe, or /dev/null), eight
 * hex digits of length, then the request as split_request() reads it. The
 * request is what bwrap would otherwise have been told to run after
 * `--inner`, so it may hold only what an inner helper may be given: no
 * namespace, no identity, no copies, no second request. End of file first
 * (the server let the call go, or is gone) ends it here, having run nothing.
 */
static char request_bytes[MAX_REQUEST_BYTES];

static int read_exactly(char *into, size_t length) {
  for (size_t at = 0; at < length;) {
    ssize_t n = read(0, into + at, length - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    at += (size_t)n;
  }
  return 1;
}

static void read_request(struct options *o, char *self) {
  char head[9];
  unsigned long length;
  if (!read_exactly(head, sizeof head)) _exit(EXIT_SETUP);
  if ((head[0] != 'p' && head[0] != 'n') || !hex_field(head + 1, &length) || length == 0 ||
      length > MAX_REQUEST_BYTES) {
    errno = EINVAL;
    setup_failed("request header");
  }
  if (!read_exactly(request_bytes, length)) _exit(EXIT_SETUP);
  if (head[0] == 'n') {
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0) setup_failed("/dev/null");
    close(null);
  }
  struct request r;
  const char *bad = split_request(request_bytes, length, self, &r);
  if (bad != NULL) setup_failed(bad);
  enter_request(&r);
  struct options given = {0};
  parse_or_fail(&given, r.argc, r.argv);
  if (given.pidns != 0 || given.uid >= 0 || given.init_exec || given.ncopies != 0 ||
      given.backstop_ms != 0 || given.backstop_at_go || given.request || given.go != 0) {
    errno = EINVAL;
    setup_failed("request (only what an inner helper is given)");
  }
  *o = given;
}

/* ---- outer and init ----------------------------------------------------- */

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) setup_failed(path);
  ssize_t n = write(fd, text, strlen(text));
  if (n != (ssize_t)strlen(text)) setup_failed(path);
  close(fd);
}

/* What start_init()'s child needs, read from the serving helper's memory before its exec. */
struct init_start {
  const struct options *o;
  const struct request *r;
  int in, out, err;
};

static void enter_call_fds(int in, int out, int err, int executes);
/* This process's pidfd, uid and gid, and its own file (what every init
   executes), read once by serve(). */
static int serve_pidfd = -1;
static int serve_exe = -1;
static uid_t serve_uid;
static gid_t serve_gid;

/* The init's argv: this program, --as-init, then the call's options and command. */
static char *init_argv[MAX_REQUEST_BYTES / 2 + 3];
/* The child's stack while it shares our memory (we are suspended until it executes). */
static char init_stack[64 * 1024] __attribute__((aligned(16)));

static void map_own_ids(uid_t uid, gid_t gid);

/*
 * The child of start_init(), in the new namespace, in our memory and on
 * init_stack until it executes: so it writes no memory of ours but its
 * stack, init_argv and errno (system calls, and formatting on its own
 * stack; no state of the C library's or ours changes).
 */
static int exec_init(void *arg) {
  const struct init_start *s = arg;
  /* Its own table of handlers (no CLONE_SIGHAND): SIGPIPE, the one we ignore, back to the default. */
  default_disposition(SIGPIPE);
  enter_call_fds(s->in, s->out, s->err, 1);
  if (s->o->pidns == 2) map_own_ids(serve_uid, serve_gid);
  /* The working folder too is entered after the exec: a folder that hangs
     (a network mount gone away) then holds up this call alone, never us. */
  init_argv[0] = s->r->argv[0];
  init_argv[1] = "--as-init";
  init_argv[2] = (char *)s->r->cwd;
  for (int i = 1; i <= s->r->argc; i++) init_argv[i + 2] = s->r->argv[i];
  syscall(SYS_execveat, serve_exe, "", init_argv, s->r->env, AT_EMPTY_PATH);
  int err = errno;
  /* The command's arguments and environment are in ours: too long for our
     exec, too long for the command's, and reported as its failure would be. */
  if (err == E2BIG && s->o->argv[0] != NULL) {
    say("failed to execute %s: %s", s->o->argv[0], strerror(err));
    _exit(exec_status(err));
  }
  say("cannot start the init: %s", strerror(err));
  _exit(EXIT_SETUP);
}

/*
 * Creates the call's PID namespace and its init in one clone(): as root a
 * new PID namespace alone; otherwise a user namespace of our own with it,
 * mapping only the server's uid and gid. The child shares our memory and
 * we wait (CLONE_VM | CLONE_VFORK) until it executes this program again as
 * the namespace's init (--as-init, the same options): no page table of
 * ours is copied and no page of ours is shared copy-on-write with a
 * process that lives as long as its call. On a paravirtualized VM each
 * copy-on-write fault after a fork costs a TLB flush on the other core,
 * and the copies and faults cost more than executing this small static
 * program anew. Returns the init's pid, or -1 with errno.
 */
static pid_t start_init(const struct options *o, const struct request *r, int in, int out,
                        int err) {
  int flags = CLONE_VM | CLONE_VFORK | CLONE_NEWPID | (o->pidns == 2 ? CLONE_NEWUSER : 0) | SIGCHLD;
  struct init_start start = {.o = o, .r = r, .in = in, .out = out, .err = err};
  return clone(exec_init, init_stack + sizeof init_stack, flags, &start);
}

/* In a new user namespace: maps only `uid` and `gid`, the creator's (read before the clone). */
static void map_own_ids(uid_t uid, gid_t gid) {
  char map[64];
  write_file("/proc/self/setgroups", "deny");
  snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
  write_file("/proc/self/uid_map", map);
  snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
  write_file("/proc/self/gid_map", map);
}

/*
 * --copy-in=PATH...: the files bwrap copies into the sandbox (--file FD),
 * opened here at FIRST_COPY_FD, FIRST_COPY_FD + 1, ... in order, without
 * close-on-exec, for bwrap to read. Opened after the uid change: a copy holds
 * nothing the command could not read itself. A file missing on the host is
 * /dev/null instead (it arrives empty, as good as absent for what reads
 * these); any other failure stops the call, with nothing run.
 */
static void open_copies(const struct options *o) {
  for (int i = 0; i < o->ncopies; i++) {
    int fd = open(o->copies[i], O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT) fd = open("/dev/null", O_RDONLY);
    if (fd < 0) setup_failed(o->copies[i]);
    int want = FIRST_COPY_FD + i;
    if (fd != want) {
      if (dup2(fd, want) != want) setup_failed(o->copies[i]);
      close(fd);
    }
  }
}

/*
 * The command's process, from a namespace's pid 1. vfork: it shares our
 * memory until it executes (or exits), so no page table is copied; on a
 * VM that copy and its faults were 0.4 to 0.5 ms of every call. We have
 * nothing to do meanwhile: nothing of the call runs before its exec, so
 * there is no orphan of it to reap. exec_command() never returns, changes
 * only what is the child's own (its descriptors, mask, rlimits and
 * no_new_privs: vfork shares the memory alone) and writes no memory of
 * ours but errno and its own stack.
 */
static pid_t start_command(const struct options *o) {
  pid_t child = vfork();
  if (child < 0) setup_failed("vfork");
  if (child == 0) exec_command(o, o->argv);
  return child;
}

/* A namespace's pid 1, last: reaps orphans too (we are their init) until `child` ends. */
static _Noreturn void reap_until(pid_t child) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid == child) _exit(encode_status(status));
    if (pid < 0 && errno != EINTR) _exit(EXIT_SETUP);
  }
}

/*
 * A namespace's pid 1, last steps: starts the command (or runs a plan)
 * and reaps until it ends. The command itself is never pid 1, which would
 * ignore every signal it has no handler for and adopt every orphan.
 */
static _Noreturn void run_as_init(const struct options *o) {
  if (o->plan) run_plan(o);
  reap_until(start_command(o));
}

/*
 * pid 1 of the new namespace. `parent` is a pidfd of the process that
 * created it (the serving helper), whose death its parent-death signal
 * answers.
 */
static _Noreturn void run_init(const struct options *o, int parent) {
  if (o->uid >= 0) {
    /* Groups first: after setuid we could no longer clear them. */
    if (o->pidns == 2 && ((uid_t)o->uid != getuid() || (gid_t)o->gid != getgid())) {
      errno = EPERM;
      setup_failed("--setuid without root");
    }
    if (o->pidns != 2 && setgroups(0, NULL) != 0) setup_failed("setgroups");
    if (setgid((gid_t)o->gid) != 0) setup_failed("setgid");
    if (setuid((uid_t)o->uid) != 0) setup_failed("setuid");
  }
  /* Set after the uid change, which clears it. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) setup_failed("PR_SET_PDEATHSIG");
  /* The parent may have died before the line above: its pidfd then reads as ended.
     (Not getppid(): in its own PID namespace the init sees no parent at all.) */
  struct pollfd alive = {.fd = parent, .events = POLLIN};
  if (poll(&alive, 1, 0) != 0) _exit(EXIT_SETUP);
  close(parent);
  if (o->init_exec) {
    /* bwrap is exec'd at once: inside it, the command waits for its request. */
    reset_signals();
    close_above_stderr();
    open_copies(o);
    execve(o->argv[0], o->argv, environ);
    int err = errno;
    say("cannot start %s: %s", o->argv[0], strerror(err));
    _exit(exec_status(err));
  }
  run_as_init(o);
}

/*
 * The init's first steps, in the image start_init() executed; `parent` is
 * the serving helper's pidfd (see run_init()).
 */
static _Noreturn void become_init(const struct options *o, int parent) {
  /* A new session: no controlling terminal, no terminal signal. */
  if (setsid() < 0) setup_failed("setsid");
  /* Larger output pipes: a flood then reaches the server in fewer, larger
     reads (each read costs the server an allocation or two). Not a pipe, or
     over the system's pipe-max-size: keep the default. */
  fcntl(1, F_SETPIPE_SZ, OUTPUT_PIPE_BYTES);
  fcntl(2, F_SETPIPE_SZ, OUTPUT_PIPE_BYTES);
  run_init(o, parent);
}

/* A pidfd of this process, for the inits it creates (run_init()); needs Linux 5.3. */
static int own_pidfd(void) {
  int fd = (int)syscall(SYS_pidfd_open, getpid(), 0U);
  if (fd < 0) setup_failed("pidfd_open");
  return fd;
}

/* The startup probe, a call like any other (the server makes it through the
   serving helper): reports the uid and gid the server's commands start from,
   and where each absolute path given after it is a symlink to (the host's
   merged-/usr layout, which the server's own permissions cannot read). */
static _Noreturn void dump(int argc, char **argv) {
  dprintf(1, "uid: %u\ngid: %u\n", (unsigned)getuid(), (unsigned)getgid());
  for (int i = 2; i < argc; i++) {
    char target[4096];
    ssize_t n = argv[i][0] == '/' ? readlink(argv[i], target, sizeof target - 1) : -1;
    if (n <= 0) continue;
    target[n] = '\0';
    if (strchr(target, '\n') == NULL && strchr(argv[i], '\n') == NULL) {
      dprintf(1, "link: %s %s\n", argv[i], target);
    }
  }
  _exit(0);
}

/*
 * --list-beneath ROOT REL (a call of --serve, a plain fork like --dump):
 * lists the folder REL below the folder ROOT for the server's glob
 * expansion and link-following tree walk. The server lists with its own
 * rights, outside any sandbox, and Deno lists only by path, so a folder
 * renamed to and from a link while it is read would show a host folder's
 * names; here openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS resolves
 * every component from ROOT without following any link or leaving ROOT,
 * and the entries are read from that descriptor. Prints each entry as a
 * type byte (d folder, l link, f file, o other) and its name, each
 * NUL-terminated. Exit 0; 3 when REL is missing or not a folder; 4 when a
 * component of it is a link; 1 otherwise (said on stderr).
 */
static char list_out[64 * 1024];
static size_t list_len;

static void list_flush(void) {
  size_t at = 0;
  while (at < list_len) {
    ssize_t n = write(1, list_out + at, list_len - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(1);
    at += (size_t)n;
  }
  list_len = 0;
}

/* The folder ROOT itself, as the anchor every folder beneath it is opened from. */
static int open_root(const char *what, const char *root) {
  int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) {
    say("%s %s: %s", what, root, strerror(errno));
    _exit(1);
  }
  return rootfd;
}

/* The folder REL below ROOTFD, every component resolved beneath it and
   none a link (ELOOP for one): a folder swapped for a link fails. */
static int open_beneath(int rootfd, const char *rel) {
  struct open_how how = {0};
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return (int)syscall(SYS_openat2, rootfd, rel[0] ? rel : ".", &how, sizeof how);
}

static _Noreturn void list_beneath(const char *root, const char *rel) {
  int rootfd = open_root("list", root);
  int fd = open_beneath(rootfd, rel);
  if (fd < 0) {
    int e = errno;
    say("list %s: %s", rel, strerror(e));
    _exit(e == ENOENT || e == ENOTDIR ? 3 : e == ELOOP ? 4 : 1);
  }
  DIR *dir = fdopendir(fd);
  if (dir == NULL) {
    say("list %s: %s", rel, strerror(errno));
    _exit(1);
  }
  for (;;) {
    errno = 0;
    struct dirent *d = readdir(dir);
    if (d == NULL) break;
    if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0) continue;
    unsigned char t = d->d_type;
    if (t == DT_UNKNOWN) {
      struct stat st;
      if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) t = IFTODT(st.st_mode);
    }
    size_t n = strlen(d->d_name);
    if (list_len + n + 2 > sizeof list_out) list_flush();
    list_out[list_len++] = t == DT_DIR ? 'd' : t == DT_LNK ? 'l' : t == DT_REG ? 'f' : 'o';
    memcpy(list_out + list_len, d->d_name, n + 1);
    list_len += n + 1;
  }
  if (errno != 0) {
    say("list %s: %s", rel, strerror(errno));
    _exit(1);
  }
  list_flush();
  _exit(0);
}

/*
 * --walk-beneath ROOT REL MAX GIT (a call of --serve, a plain fork like
 * --list-beneath): the whole tree below the folder REL below ROOT in one
 * call, for the repository check's search of a work tree and the path
 * checks' search of a tree for links (a listing per folder costs the
 * server about a millisecond, and trees hold thousands). Every folder is
 * opened as --list-beneath opens REL (openat2 from ROOT, RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), so a folder swapped for a link while it is walked
 * fails the walk instead of leading out; links are reported, never
 * followed; an entry named .git is reported, and a .git folder descended
 * into only when GIT is "into" (else "stop"). Prints, NUL-terminated, a type byte and a path
 * relative to ROOT: l for each link, g for each .git that is a folder, a
 * file or a link (a .git link is reported both ways). Exit 0; 3 when REL is
 * missing or not a folder; 4 when a component of a folder is a link; 5
 * when the tree holds more than MAX entries; 1 otherwise (said on stderr).
 */
struct walk_stack {
  char **paths;
  size_t len, cap;
};

static void walk_push(struct walk_stack *stack, char *path) {
  if (stack->len == stack->cap) {
    size_t cap = stack->cap == 0 ? 256 : stack->cap * 2;
    char **grown = realloc(stack->paths, cap * sizeof *grown);
    if (grown == NULL) _exit(1);
    stack->paths = grown;
    stack->cap = cap;
  }
  stack->paths[stack->len++] = path;
}

static void walk_put(char type, const char *path) {
  size_t n = strlen(path);
  if (n + 2 > sizeof list_out) {
    say("walk %s: path too long", path);
    _exit(1);
  }
  if (list_len + n + 2 > sizeof list_out) list_flush();
  list_out[list_len++] = type;
  memcpy(list_out + list_len, path, n + 1);
  list_len += n + 1;
}

static _Noreturn void walk_beneath(const char *root, const char *rel, const char *max_text,
                                   const char *git) {
  int into_git = strcmp(git, "into") == 0;
  if (!into_git && strcmp(git, "stop") != 0) {
    say("walk: bad .git mode %s", git);
    _exit(1);
  }
  char *end = NULL;
  errno = 0;
  unsigned long long max = strtoull(max_text, &end, 10);
  if (errno != 0 || end == max_text || *end != '\0') {
    say("walk: bad entry bound %s", max_text);
    _exit(1);
  }
  int rootfd = open_root("walk", root);
  struct walk_stack stack = {0};
  char *top = strdup(rel[0] ? rel : ".");
  if (top == NULL) _exit(1);
  walk_push(&stack, top);
  unsigned long long seen = 0;
  while (stack.len > 0) {
    char *path = stack.paths[--stack.len];
    int fd = open_beneath(rootfd, path);
    if (fd < 0) {
      int e = errno;
      say("walk %s: %s", path, strerror(e));
      /* Missing is only REL's to say: a folder gone while walked fails the walk. */
      _exit(path == top && (e == ENOENT || e == ENOTDIR) ? 3 : e == ELOOP ? 4 : 1);
    }
    DIR *dir = fdopendir(fd);
    if (dir == NULL) {
      say("walk %s: %s", path, strerror(errno));
      _exit(1);
    }
    int dot = strcmp(path, ".") == 0;
    for (;;) {
      errno = 0;
      struct dirent *d = readdir(dir);
      if (d == NULL) break;
      if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0) continue;
      if (++seen > max) {
        say("walk %s: more than %llu entries", rel, max);
        _exit(5);
      }
      unsigned char t = d->d_type;
      if (t == DT_UNKNOWN) {
        struct stat st;
        if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) t = IFTODT(st.st_mode);
      }
      if (t != DT_DIR && t != DT_LNK && strcmp(d->d_name, ".git") != 0) continue;
      size_t plen = dot ? 0 : strlen(path) + 1, nlen = strlen(d->d_name);
      char *child = malloc(plen + nlen + 1);
      if (child == NULL) _exit(1);
      if (!dot) {
        memcpy(child, path, plen - 1);
        child[plen - 1] = '/';
      }
      memcpy(child + plen, d->d_name, nlen + 1);
      if (strcmp(d->d_name, ".git") == 0) {
        if (t == DT_DIR || t == DT_REG || t == DT_LNK) walk_put('g', child);
        if (t == DT_LNK) walk_put('l', child);
        if (t == DT_DIR && into_git) walk_push(&stack, child);
        else free(child);
      } else if (t == DT_LNK) {
        walk_put('l', child);
        free(child);
      } else {
        walk_push(&stack, child);
      }
    }
    if (errno != 0) {
      say("walk %s: %s", path, strerror(errno));
      _exit(1);
    }
    closedir(dir);
    if (path != top) free(path);
  }
  list_flush();
  _exit(0);
}

/*
 * A call without a namespace of its own (--inner, inside bwrap): the
 * request, the egress forwarder, then the command or the plan.
 */
static _Noreturn void run_inner(struct options *o, char *self) {
  if (o->request) read_request(o, self);
  int listener = o->egress_port != 0 ? open_listener(o) : -1;
  /* pid 1 of bwrap's namespace (its --as-pid-1): the init bwrap no longer adds. */
  int init = getpid() == 1;
  if (init && !o->plan) {
    /* The command first, so that it is pid 2 as everywhere (the startup
       probe checks it), then the forwarder, whose connections meanwhile
       wait in the listener's backlog. */
    pid_t child = start_command(o);
    if (listener >= 0) start_forwarder(o, listener);
    reap_until(child);
  }
  if (listener >= 0) start_forwarder(o, listener);
  if (o->plan) {
    /* Not pid 1: adopt the orphans ourselves, to reap them. */
    if (!init) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    run_plan(o);
  }
  exec_command(o, o->argv);
}

/*
 * --as-init CWD OPTIONS -- COMMAND: a contained call's init, executed by
 * the child start_init() made in the new namespace (its pipes at 0-2, the
 * serving helper's pidfd at 3). Only as pid 1 of a namespace: the kernel
 * ending everything in it when we exit is what makes our end the tree's.
 * `argv` starts at --as-init.
 */
static _Noreturn void run_exec_init(int argc, char **argv) {
  if (getpid() != 1) {
    errno = EPERM;
    setup_failed("--as-init outside a new PID namespace");
  }
  if (argc < 2) {
    errno = EINVAL;
    setup_failed("--as-init without a working folder");
  }
  /* What Deno's spawn did for the cwd: a folder gone since the call was
     checked ends the call here, before anything starts. */
  if (chdir(argv[1]) != 0) {
    say("chdir %s: %s", argv[1], strerror(errno));
    _exit(EXIT_SETUP);
  }
  /* parse() reads from index 1: the folder stands where our name would. */
  struct options o = {0};
  parse_or_fail(&o, argc - 1, argv + 1);
  if (o.pidns == 0) {
    errno = EINVAL;
    setup_failed("--as-init without --pidns=");
  }
  /* The child reset SIGPIPE, the one signal the serving helper ignores, and
     executing reset every handler: each disposition is the default. */
  dispositions_default = 1;
  become_init(&o, 3);
}

/*
 * Without --serve: the inner helper bwrap executes (--inner, or no
 * --pidns=), the one program of a call executed anew. A contained call
 * (--pidns=) is refused here: the serving helper is the outer of every
 * contained call (it keeps the backstop, answers the kill requests and
 * reports the end), and a second outer to keep in step with it would be a
 * second place for the same guarantees to go wrong.
 */
static _Noreturn void run_one_off(int argc, char **argv) {
  struct options o = {0};
  parse_or_fail(&o, argc, argv);
  if (o.pidns != 0) {
    errno = EINVAL;
    setup_failed("--pidns= runs only as a call of --serve");
  }
  close_above_stderr();
  run_inner(&o, argv[0]);
}

/* ---- serving (--serve) -------------------------------------------------- */

/*
 * --serve: one helper for many calls, so the server spawns a process once,
 * not once per call (its spawn holds the server's event loop through a
 * vfork, and each exec of this program costs the call CPU). The server
 * writes frames on stdin and reads frames on stdout, each a kind byte,
 * eight hex digits of call id and eight of payload length, then the payload:
 *
 *   in:  R id  S REQUEST    start a call: S is 'p' (stdin is a pipe fed by
 *                           I frames) or 'n' (/dev/null); REQUEST as
 *                           split_request() reads it
 *        I id  BYTES        for the call's stdin (the go byte, its input, a plan)
 *        E id               end of the call's stdin
 *        K id  SIGNAL       stop the call: 14 (SIGALRM, the polite kill),
 *                           15, or 9 (the last resort); nothing else. A
 *                           contained call's init is SIGKILLed for each.
 *        B id  MS           the go of a call made ahead (--backstop-at-go):
 *                           its backstop of MS ms starts now
 *        D id               stop reading the call's output (its pipes close)
 *   out: O id  BYTES / e id BYTES   the call's stdout / stderr
 *        C id  "1" or "2"   that stream reached its end
 *        X id  STATUS       the call's process was reaped: a wait status,
 *                           decimal (for a contained call, an exit with the
 *                           call's exit code: see end_status())
 *
 * A contained call (--pidns=) is its namespace's init, cloned by this
 * process straight into the new namespace and executed anew as this
 * program (--as-init, see start_init()): this process is the outer of
 * every contained call, and the only one. It keeps each call's backstop
 * in its own loop, and an init's reaping means its namespace is empty.
 * Any other call (--dump, --list-beneath, --walk-beneath, --inner) is a plain fork. Either way the call's
 * process starts with descriptors 0-2 its own pipes and every other
 * descriptor closed, so no call can reach another's pipes or this
 * process's, and with exactly the request's cwd and environment. This
 * process runs nothing of a call itself and holds no privilege the server
 * lacks: it parses requests, creates namespaces, moves bytes, signals only
 * its own unreaped children (a zombie's pid cannot be reused, so a signal
 * never reaches a stranger) and reports their ends. It dies with the
 * server (parent-death signal), and each call's init dies with it, taking
 * its namespace along. End of file on stdin: every call still running is
 * stopped and reaped, and it exits.
 */
#define MAX_CALLS 1024
#define FRAME_HEAD 17
#define MAX_FRAME_BYTES (MAX_REQUEST_BYTES + 1)
#define READ_CHUNK (64 * 1024)

struct call {
  int used, reaped;
  unsigned id;
  pid_t pid;
  /* pid is the call's init (its namespace's pid 1), which this process
     created: a kill request SIGKILLs it, and its end is reported as the
     call's exit code (see end_status()). Otherwise pid is a plain fork
     (--dump, --inner). */
  int contained;
  int killed;                /* SIGKILLed on request or by its backstop */
  long long deadline;        /* its backstop, in monotonic ms; 0 for none */
  int backstop_at_go;        /* the backstop starts with the go (a B frame) */
  int in, out, err; /* our ends, -1 once closed */
  int close_in;     /* E came: close `in` once `pending` is written */
  char *pending;
  size_t pending_len, pending_at;
};

static struct call calls[MAX_CALLS];
static char frames_in[MAX_FRAME_BYTES + FRAME_HEAD + READ_CHUNK];
static size_t frames_in_len;
static char chunk[READ_CHUNK];

/*
 * Stops every call still running and exits once all are reaped: the server
 * let us go or is gone. An init is reaped only once its namespace is
 * empty, so our exit means every tree is gone.
 */
static int ending;
static void emit(char kind, unsigned id, const void *data, size_t len);
static int end_status(struct call *c, int status);
static void stop_call(struct call *c, int sig);

static _Noreturn void serve_end(void) {
  if (ending) _exit(0); /* the server stopped reading while we reported the ends */
  ending = 1;
  for (int i = 0; i < MAX_CALLS; i++) {
    if (calls[i].used && !calls[i].reaped) stop_call(&calls[i], SIGALRM);
  }
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, 0)) > 0 || errno == EINTR) {
    for (int i = 0; pid > 0 && i < MAX_CALLS; i++) {
      if (!calls[i].used || calls[i].pid != pid) continue;
      /* Reported if the server still reads: its calls end as stopped. */
      char text[16];
      int n = snprintf(text, sizeof text, "%d", end_status(&calls[i], status));
      emit('X', calls[i].id, text, (size_t)n);
    }
  }
  _exit(0);
}

/* ---- backstops: each contained call's deadline, kept by this loop ---- */

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * The polite kill (SIGALRM), the last resort (SIGKILL) or SIGTERM: an
 * init is SIGKILLed whichever was asked, which takes its whole namespace
 * with it; a plain fork gets the signal asked for. Only our own unreaped
 * children are signalled (a zombie's pid cannot be reused, so a signal
 * never reaches a stranger).
 */
static void stop_call(struct call *c, int sig) {
  if (c->reaped) return;
  if (!c->contained) {
    kill(c->pid, sig);
    return;
  }
  if (!c->killed) kill(c->pid, SIGKILL);
  c->killed = 1;
  c->deadline = 0;
}

/*
 * A call's end as its wait status on the wire: an init's as an exit with
 * the call's exit code (the command's, 128+N when it died of signal N, or
 * 137 once killed on request or by its backstop), so the server reads one
 * exit code whatever the init itself died of.
 */
static int end_status(struct call *c, int status) {
  if (!c->contained) return status;
  return (c->killed ? 128 + SIGKILL : encode_status(status)) << 8;
}

/* SIGKILLs every call whose backstop has passed. */
static void fire_backstops(void) {
  long long now = 0;
  for (int i = 0; i < MAX_CALLS; i++) {
    struct call *c = &calls[i];
    if (!c->used || c->reaped || c->deadline == 0) continue;
    if (now == 0) now = now_ms();
    if (now >= c->deadline) stop_call(c, SIGKILL);
  }
}

/* How long poll() may wait before the next backstop is due: -1 for as long as it takes. */
static int until_next_backstop(void) {
  long long next = 0;
  for (int i = 0; i < MAX_CALLS; i++) {
    const struct call *c = &calls[i];
    if (c->used && !c->reaped && c->deadline != 0 && (next == 0 || c->deadline < next)) {
      next = c->deadline;
    }
  }
  if (next == 0) return -1;
  long long wait = next - now_ms();
  return wait <= 0 ? 0 : wait > 0x7fffffff ? 0x7fffffff : (int)wait;
}

/*
 * Our stdout is non-blocking (serve()): a server that stops reading for a
 * while (its event loop busy) must not stop the backstops, which are the
 * limit of last resort when the server's own timers cannot run.
 */
static void write_all_out(const struct iovec *iov, int count) {
  struct iovec v[2];
  memcpy(v, iov, sizeof(struct iovec) * (size_t)count);
  int at = 0;
  while (at < count) {
    ssize_t n = writev(1, v + at, count - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      struct pollfd out = {.fd = 1, .events = POLLOUT};
      poll(&out, 1, until_next_backstop());
      fire_backstops();
      continue;
    }
    /* The server stopped reading: it is gone. */
    if (n <= 0) serve_end();
    while (at < count && (size_t)n >= v[at].iov_len) n -= (ssize_t)v[at++].iov_len;
    if (at < count) {
      v[at].iov_base = (char *)v[at].iov_base + n;
      v[at].iov_len -= (size_t)n;
    }
  }
}

static void emit(char kind, unsigned id, const void *data, size_t len) {
  char head[FRAME_HEAD + 1];
  snprintf(head, sizeof head, "%c%08x%08zx", kind, id, len);
  struct iovec iov[2] = {{head, FRAME_HEAD}, {(void *)data, len}};
  write_all_out(iov, len > 0 ? 2 : 1);
}

static struct call *find_call(unsigned id) {
  for (int i = 0; i < MAX_CALLS; i++) {
    if (calls[i].used && calls[i].id == id) return &calls[i];
  }
  return NULL;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* A call is forgotten once reaped and both its streams have ended. */
static void maybe_free(struct call *c) {
  if (!c->reaped || c->out >= 0 || c->err >= 0) return;
  close_fd(&c->in);
  free(c->pending);
  memset(c, 0, sizeof *c);
}

/* A call that could not be started ends as a spawn of it would have: 125 and a line. */
static void fail_call(unsigned id, const char *what) {
  char line[256];
  int n = snprintf(line, sizeof line, NAME ": %s: %s\n", what, strerror(errno));
  emit('e', id, line, n > 0 ? (size_t)n : 0);
  emit('C', id, "1", 1);
  emit('C', id, "2", 1);
  char status[16];
  n = snprintf(status, sizeof status, "%d", EXIT_SETUP << 8);
  emit('X', id, status, (size_t)n);
}

/*
 * A call's descriptors: its pipes at 0-2, our pidfd at 3 (which a new init
 * needs until it has set its parent-death signal, see run_init()), and no
 * other of ours. `executes`: the caller executes a program next (an init's
 * child, which executes this program from serve_exe), so the pidfd is
 * kept through that exec and every other descriptor closes at it; else
 * every other descriptor closes now.
 */
static void enter_call_fds(int in, int out, int err, int executes) {
  int stdin_fd = in >= 0 ? in : open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (stdin_fd < 0 || dup2(stdin_fd, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
    _exit(EXIT_SETUP);
  }
  if (dup2(serve_pidfd, 3) < 0) _exit(EXIT_SETUP);
  if (!executes) {
    if (syscall(SYS_close_range, 4U, ~0U, 0U) != 0) {
      for (int fd = 4; fd < 65536; fd++) close(fd);
    }
    return;
  }
  /* A pidfd is opened close-on-exec, and dup2() onto itself keeps the flag. */
  if (fcntl(3, F_SETFD, 0) != 0) _exit(EXIT_SETUP);
  if (syscall(SYS_close_range, 4U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 4; fd < 65536; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
}

/*
 * A plain fork's entry into its call: the descriptors, the signal defaults,
 * then its request's environment and folder. Returns where our pidfd is.
 */
static int enter_call(int in, int out, int err, const struct request *r) {
  signal(SIGPIPE, SIG_DFL);
  dispositions_default = 1;
  enter_call_fds(in, out, err, 0);
  enter_request(r);
  return 3;
}

static void start_call(unsigned id, char *payload, size_t len, char *self) {
  struct call *c = NULL;
  for (int i = 0; i < MAX_CALLS && c == NULL; i++) {
    if (!calls[i].used) c = &calls[i];
  }
  if (find_call(id) != NULL || len < 2 || (payload[0] != 'p' && payload[0] != 'n')) {
    errno = EINVAL;
    fail_call(id, "serve: malformed start");
    return;
  }
  if (c == NULL) {
    errno = EAGAIN;
    fail_call(id, "serve: too many calls");
    return;
  }
  /* Read here, not in the call's process: a contained call's namespace is
     created by the clone that makes its process. */
  struct request r;
  const char *bad = split_request(payload + 1, len - 1, self, &r);
  if (bad != NULL) {
    fail_call(id, bad);
    return;
  }
  int list_call = r.argc == 4 && strcmp(r.argv[1], "--list-beneath") == 0;
  int walk_call = r.argc == 6 && strcmp(r.argv[1], "--walk-beneath") == 0;
  int dump_call = list_call || walk_call || (r.argc >= 2 && strcmp(r.argv[1], "--dump") == 0);
  struct options o = {0};
  if (!dump_call) {
    parse(&o, r.argc, r.argv);
    if (o.invalid != NULL) {
      errno = EINVAL;
      fail_call(id, o.invalid);
      return;
    }
  }
  int contained = !dump_call && o.pidns != 0;
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if ((payload[0] == 'p' ? pipe2(in, O_CLOEXEC) : 0) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
      pipe2(err, O_CLOEXEC) != 0) {
    fail_call(id, "serve: pipe");
    for (int i = 0; i < 2; i++) close_fd(&in[i]), close_fd(&out[i]), close_fd(&err[i]);
    return;
  }
  pid_t pid = contained ? start_init(&o, &r, in[0], out[1], err[1]) : fork();
  if (pid == 0) {
    int parent = enter_call(in[0], out[1], err[1], &r);
    close(parent);
    if (list_call) list_beneath(r.argv[2], r.argv[3]);
    if (walk_call) walk_beneath(r.argv[2], r.argv[3], r.argv[4], r.argv[5]);
    if (dump_call) dump(r.argc, r.argv);
    run_inner(&o, self);
  }
  close_fd(&in[0]);
  close_fd(&out[1]);
  close_fd(&err[1]);
  if (pid < 0) {
    fail_call(id, !contained                ? "serve: fork"
                  : o.pidns == 2 ? "serve: clone(CLONE_NEWUSER|CLONE_NEWPID)"
                                 : "serve: clone(CLONE_NEWPID)");
    close_fd(&in[1]), close_fd(&out[0]), close_fd(&err[0]);
    return;
  }
  *c = (struct call){.used = 1,
                     .id = id,
                     .pid = pid,
                     .contained = contained,
                     .deadline = contained && o.backstop_ms > 0 ? now_ms() + o.backstop_ms : 0,
                     .backstop_at_go = contained && o.backstop_at_go,
                     .in = in[1],
                     .out = out[0],
                     .err = err[0]};
  if (c->in >= 0) fcntl(c->in, F_SETFL, O_NONBLOCK);
  fcntl(c->out, F_SETFL, O_NONBLOCK);
  fcntl(c->err, F_SETFL, O_NONBLOCK);
}

/* Writes what the call's stdin can take now; the rest waits for POLLOUT. */
static void feed(struct call *c) {
  while (c->in >= 0 && c->pending_at < c->pending_len) {
    ssize_t n = write(c->in, c->pending + c->pending_at, c->pending_len - c->pending_at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    /* A command that exits without reading its input: the rest is dropped. */
    if (n <= 0) {
      close_fd(&c->in);
      break;
    }
    c->pending_at += (size_t)n;
  }
  if (c->pending_at == c->pending_len) {
    free(c->pending);
    c->pending = NULL;
    c->pending_len = c->pending_at = 0;
    if (c->close_in) close_fd(&c->in);
  }
}

static void add_input(struct call *c, const char *data, size_t len) {
  if (c->in < 0 || c->close_in || len == 0) return;
  size_t left = c->pending_len - c->pending_at;
  char *grown = malloc(left + len);
  if (grown == NULL) {
    close_fd(&c->in);
    return;
  }
  if (left > 0) memcpy(grown, c->pending + c->pending_at, left);
  memcpy(grown + left, data, len);
  free(c->pending);
  c->pending = grown;
  c->pending_len = left + len;
  c->pending_at = 0;
  feed(c);
}

static void on_frame(char kind, unsigned id, char *payload, size_t len, char *self) {
  if (kind == 'R') {
    start_call(id, payload, len, self);
    return;
  }
  struct call *c = find_call(id);
  /* A frame for a call already forgotten (it ended meanwhile): nothing to do. */
  if (c == NULL) return;
  if (kind == 'I') add_input(c, payload, len);
  else if (kind == 'E') {
    c->close_in = 1;
    feed(c);
  } else if (kind == 'K') {
    char text[8] = {0};
    memcpy(text, payload, len < sizeof text - 1 ? len : sizeof text - 1);
    int sig = atoi(text);
    if (sig == SIGALRM || sig == SIGTERM || sig == SIGKILL) stop_call(c, sig);
  } else if (kind == 'B') {
    char text[12] = {0};
    memcpy(text, payload, len < sizeof text - 1 ? len : sizeof text - 1);
    char *end;
    errno = 0;
    long ms = strtol(text, &end, 10);
    if (!c->reaped && c->backstop_at_go && errno == 0 && *end == '\0' && ms > 0 &&
        ms <= 0x7fffffff) {
      /* The go of a call made ahead: its deadline starts now, once. */
      c->deadline = now_ms() + ms;
      c->backstop_at_go = 0;
    }
  } else if (kind == 'D') {
    close_fd(&c->out);
    close_fd(&c->err);
    maybe_free(c);
  } else {
    errno = EINVAL;
    setup_failed("serve: unknown frame");
  }
}

/* Reads what the server wrote and acts on every whole frame in it. */
static void read_frames(char *self) {
  ssize_t n = read(0, frames_in + frames_in_len, sizeof frames_in - frames_in_len);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) serve_end();
  frames_in_len += (size_t)n;
  size_t at = 0;
  while (frames_in_len - at >= FRAME_HEAD) {
    unsigned long id, len;
    if (!hex_field(frames_in + at + 1, &id) || !hex_field(frames_in + at + 9, &len) ||
        len > MAX_FRAME_BYTES) {
      errno = EINVAL;
      setup_failed("serve: malformed frame");
    }
    if (frames_in_len - at < FRAME_HEAD + len) break;
    on_frame(frames_in[at], (unsigned)id, frames_in + at + FRAME_HEAD, len, self);
    at += FRAME_HEAD + len;
  }
  memmove(frames_in, frames_in + at, frames_in_len - at);
  frames_in_len -= at;
}

static void reap(int sigfd) {
  struct signalfd_siginfo info;
  while (read(sigfd, &info, sizeof info) == (ssize_t)sizeof info) {
  }
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (int i = 0; i < MAX_CALLS; i++) {
      struct call *c = &calls[i];
      if (!c->used || c->pid != pid) continue;
      c->reaped = 1;
      char text[16];
      int n = snprintf(text, sizeof text, "%d", end_status(c, status));
      emit('X', c->id, text, (size_t)n);
      maybe_free(c);
      break;
    }
  }
}

static void drain_output(struct call *c, int *fd, char kind, const char *which) {
  ssize_t n = read(*fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n > 0) {
    emit(kind, c->id, chunk, (size_t)n);
    return;
  }
  close_fd(fd);
  emit('C', c->id, which, 1);
  maybe_free(c);
}

static struct pollfd polled[2 + 3 * MAX_CALLS];
static struct {
  struct call *call;
  int role; /* 0 in, 1 out, 2 err */
} polled_for[2 + 3 * MAX_CALLS];

static _Noreturn void serve(char *self) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) setup_failed("PR_SET_PDEATHSIG");
  if (getppid() == 1) _exit(EXIT_SETUP); /* the server is already gone */
  close_above_stderr();
  /* A session of our own: no terminal signal sent to the server's process
     group (^C, ^Z, a hangup) reaches us, so none can stop or kill every
     call at once. Each call's init then leads a session of its own. */
  if (setsid() < 0 && getsid(0) != getpid()) setup_failed("setsid");
  /* Whatever this process inherited ignored (a server started under nohup,
     and Deno's own 32 and 33) stops here: each call's process starts from the
     defaults (dispositions_default). */
  for (int sig = 1; sig <= KERNEL_SIGNALS; sig++) default_disposition(sig);
  /* A call's stdin closed early, or the server's end of ours: an error, not a death. */
  signal(SIGPIPE, SIG_IGN);
  fcntl(1, F_SETPIPE_SZ, OUTPUT_PIPE_BYTES);
  fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK); /* see write_all_out() */
  serve_pidfd = own_pidfd();
  serve_exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (serve_exe < 0) setup_failed("/proc/self/exe");
  serve_uid = getuid();
  serve_gid = getgid();
  sigset_t children;
  sigemptyset(&children);
  sigaddset(&children, SIGCHLD);
  int sigfd = signalfd(-1, &children, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sigfd < 0) setup_failed("signalfd");
  for (;;) {
    int count = 0;
    polled[count++] = (struct pollfd){.fd = 0, .events = POLLIN};
    polled[count++] = (struct pollfd){.fd = sigfd, .events = POLLIN};
    for (int i = 0; i < MAX_CALLS; i++) {
      struct call *c = &calls[i];
      if (!c->used) continue;
      int fds[3] = {c->pending_len > c->pending_at ? c->in : -1, c->out, c->err};
      for (int role = 0; role < 3; role++) {
        if (fds[role] < 0) continue;
        polled_for[count].call = c;
        polled_for[count].role = role;
        polled[count++] = (struct pollfd){.fd = fds[role], .events = role == 0 ? POLLOUT : POLLIN};
      }
    }
    if (poll(polled, (nfds_t)count, until_next_backstop()) < 0) {
      if (errno == EINTR) continue;
      setup_failed("poll");
    }
    fire_backstops();
    /* Output first, then ends, then new frames: a call's bytes precede its end. */
    for (int i = 2; i < count; i++) {
      if (polled[i].revents == 0) continue;
      struct call *c = polled_for[i].call;
      if (!c->used) continue;
      if (polled_for[i].role == 0 && c->in == polled[i].fd) feed(c);
      else if (polled_for[i].role == 1 && c->out == polled[i].fd) drain_output(c, &c->out, 'O', "1");
      else if (polled_for[i].role == 2 && c->err == polled[i].fd) drain_output(c, &c->err, 'e', "2");
    }
    if (polled[1].revents != 0) reap(sigfd);
    if (polled[0].revents != 0) read_frames(self);
  }
}

int main(int argc, char **argv) {
  /* Blocked from the first instruction, and cleared only for a command
     (reset_signals()): a serving helper reads SIGCHLD through a signalfd
     (serve()), and must end only with its server (end of stdin, or the
     parent-death signal), never by a stray SIGTERM, SIGALRM or SIGUSR1,
     whose default would end it with every call at once. */
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGCHLD);
  sigaddset(&blocked, SIGALRM);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGUSR1);
  sigprocmask(SIG_BLOCK, &blocked, NULL);

  if (argc == 2 && strcmp(argv[1], "--serve") == 0) serve(argv[0]);
  if (argc >= 2 && strcmp(argv[1], "--as-init") == 0) run_exec_init(argc - 1, argv + 1);
  run_one_off(argc, argv);
}
