/*
 * htmcp-start: the installed command's start cache, checked in one exec.
 *
 * The installed script (scripts/install.ts) asks it, before anything else,
 * whether the launcher's last start for these arguments in this folder may
 * be reused:
 *
 *   htmcp-start check CACHE_DIR SALT [ARG...]
 *     exit 0: the start, printed on stdout (the script evals and execs it);
 *     exit 1: no reusable start; the entry's path is printed, for the
 *             launcher to write (HTMCP_START_CACHE);
 *     exit 2: nothing printed (a usage error; the start is not cached).
 *
 * A start is reused only when its entry is this user's own file (no
 * symlink, writable by no one else) in a folder that is this user's own
 * and closed to others (mode 0700), names exactly these arguments, this
 * salt (the launcher's hash) and this working folder, and every fact the
 * launcher looked at still reads as it did (scripts/_start_record.ts
 * records them; `observe` reads them, the same way for the launcher when it
 * writes the entry and for `check` here):
 *
 *   htmcp-start observe        facts on stdin, their reading on stdout
 *
 * The server still compares the permission flags it was started with to
 * the set it computes from the policy (permissions/confine.ts): this tool
 * decides whether a start is worth reusing, never what the server may do.
 *
 * An entry is NUL-terminated fields: "htmcp-start 1", the salt, the
 * folder, the argument count and the arguments, the facts (a count, then
 * kind, argument and fields of each), the reading, the start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "htmcp-start 1"
#define MAX_ENTRY_BYTES (1 << 20)
#define MAX_PSEUDO_BYTES (1 << 20)

/* The reading, built in memory: compared whole, printed whole. */
struct text {
  char *bytes;
  size_t len, cap;
};

static void put(struct text *t, const char *bytes, size_t len) {
  if (t->len + len + 1 > t->cap) {
    size_t cap = t->cap == 0 ? 4096 : t->cap;
    while (t->len + len + 1 > cap) cap *= 2;
    char *grown = realloc(t->bytes, cap);
    if (grown == NULL) _exit(2);
    t->bytes = grown;
    t->cap = cap;
  }
  memcpy(t->bytes + t->len, bytes, len);
  t->len += len;
  t->bytes[t->len] = '\0';
}

static void puts_(struct text *t, const char *s) { put(t, s, strlen(s)); }

static void putf(struct text *t, const char *format, long long a, long long b) {
  char buffer[64];
  int n = snprintf(buffer, sizeof buffer, format, a, b);
  if (n > 0) put(t, buffer, (size_t)n);
}

static void put_error(struct text *t, int error) { putf(t, " ! %lld", error, 0); }

/* FNV-1a, 64 bits: the key's hash (an entry names its own arguments, which
   are compared exactly; a collision only makes two starts share a file). */
static uint64_t fnv(uint64_t hash, const char *bytes, size_t len) {
  for (size_t i = 0; i < len; i++) {
    hash ^= (unsigned char)bytes[i];
    hash *= 1099511628211ULL;
  }
  return hash;
}

static const char *type_of(mode_t mode) {
  if (S_ISREG(mode)) return "file";
  if (S_ISDIR(mode)) return "dir";
  if (S_ISLNK(mode)) return "link";
  if (S_ISBLK(mode)) return "block";
  if (S_ISCHR(mode)) return "char";
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISSOCK(mode)) return "socket";
  return "other";
}

/* One field of Deno.FileInfo, as a stat answers it. Unknown names are
   printed as unknown: the launcher's recorder refuses to record them. */
static void put_field(struct text *t, const struct stat *s, const char *field) {
  puts_(t, " ");
  puts_(t, field);
  if (strcmp(field, "size") == 0) putf(t, "=%lld", (long long)s->st_size, 0);
  else if (strcmp(field, "mtime") == 0) {
    putf(t, "=%lld.%09lld", (long long)s->st_mtim.tv_sec, (long long)s->st_mtim.tv_nsec);
  } else if (strcmp(field, "atime") == 0) {
    putf(t, "=%lld.%09lld", (long long)s->st_atim.tv_sec, (long long)s->st_atim.tv_nsec);
  } else if (strcmp(field, "ctime") == 0) {
    putf(t, "=%lld.%09lld", (long long)s->st_ctim.tv_sec, (long long)s->st_ctim.tv_nsec);
  } else if (strcmp(field, "dev") == 0) putf(t, "=%lld", (long long)s->st_dev, 0);
  else if (strcmp(field, "ino") == 0) putf(t, "=%lld", (long long)s->st_ino, 0);
  else if (strcmp(field, "mode") == 0) putf(t, "=%llo", (long long)s->st_mode, 0);
  else if (strcmp(field, "nlink") == 0) putf(t, "=%lld", (long long)s->st_nlink, 0);
  else if (strcmp(field, "uid") == 0) putf(t, "=%lld", (long long)s->st_uid, 0);
  else if (strcmp(field, "gid") == 0) putf(t, "=%lld", (long long)s->st_gid, 0);
  else if (strcmp(field, "rdev") == 0) putf(t, "=%lld", (long long)s->st_rdev, 0);
  else if (strcmp(field, "blksize") == 0) putf(t, "=%lld", (long long)s->st_blksize, 0);
  else if (strcmp(field, "blocks") == 0) putf(t, "=%lld", (long long)s->st_blocks, 0);
  else if (strncmp(field, "is", 2) == 0) {
    /* The type, printed for every stat, answers isFile, isDirectory, ... */
  } else puts_(t, "=?");
}

/* A file's content without reading it: identity, size and both times. A
   write changes both times; a file put in its place is another inode; the
   change time cannot be set back. A pseudo file (/proc, /sys), whose times
   say nothing, is read and hashed instead. */
static void observe_content(struct text *t, const char *path) {
  if (strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/sys/", 5) == 0) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      put_error(t, errno);
      return;
    }
    uint64_t hash = 14695981039346656037ULL;
    char buffer[4096];
    size_t total = 0;
    ssize_t n;
    while ((n = read(fd, buffer, sizeof buffer)) > 0 && total < MAX_PSEUDO_BYTES) {
      hash = fnv(hash, buffer, (size_t)n);
      total += (size_t)n;
    }
    int error = n < 0 ? errno : 0;
    close(fd);
    if (error != 0) put_error(t, error);
    else putf(t, " fnv=%016llx", (long long)hash, 0);
    return;
  }
  struct stat s;
  if (stat(path, &s) != 0) {
    put_error(t, errno);
    return;
  }
  puts_(t, " ");
  puts_(t, type_of(s.st_mode));
  static const char *const fields[] = {"dev", "ino", "size", "mtime", "ctime"};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) put_field(t, &s, fields[i]);
}

/* One fact's reading: one line, the kind and argument first. */
static void observe_fact(struct text *t, const char *kind, const char *arg, const char *fields) {
  puts_(t, kind);
  puts_(t, " ");
  puts_(t, arg);
  if (strcmp(kind, "cwd") == 0) {
    char path[PATH_MAX];
    if (getcwd(path, sizeof path) == NULL) put_error(t, errno);
    else {
      puts_(t, " ");
      puts_(t, path);
    }
  } else if (strcmp(kind, "env") == 0) {
    /* "=" when unset, "=+VALUE" when set (even to ""): the two differ. */
    const char *value = getenv(arg);
    puts_(t, value == NULL ? "=" : "=+");
    if (value != NULL) puts_(t, value);
  } else if (strcmp(kind, "stat") == 0 || strcmp(kind, "lstat") == 0) {
    struct stat s;
    int failed = kind[0] == 'l' ? lstat(arg, &s) : stat(arg, &s);
    if (failed != 0) put_error(t, errno);
    else {
      puts_(t, " ");
      puts_(t, type_of(s.st_mode));
      char *list = strdup(fields);
      if (list == NULL) _exit(2);
      for (char *save = NULL, *field = strtok_r(list, ",", &save); field != NULL;
           field = strtok_r(NULL, ",", &save)) {
        put_field(t, &s, field);
      }
      free(list);
    }
  } else if (strcmp(kind, "content") == 0) {
    observe_content(t, arg);
  } else if (strcmp(kind, "realpath") == 0) {
    char *real = realpath(arg, NULL);
    if (real == NULL) put_error(t, errno);
    else {
      puts_(t, " ");
      puts_(t, real);
      free(real);
    }
  } else if (strcmp(kind, "readlink") == 0) {
    char target[PATH_MAX];
    ssize_t n = readlink(arg, target, sizeof target - 1);
    if (n < 0) put_error(t, errno);
    else {
      target[n] = '\0';
      puts_(t, " ");
      puts_(t, target);
    }
  } else {
    puts_(t, " ?");
  }
  puts_(t, "\n");
}

/* NUL-terminated fields of a buffer, read in order. */
struct fields {
  const char *at, *end;
};

static const char *next(struct fields *f) {
  if (f->at >= f->end) return NULL;
  const char *field = f->at;
  const char *nul = memchr(f->at, '\0', (size_t)(f->end - f->at));
  if (nul == NULL) return NULL;
  f->at = nul + 1;
  return field;
}

static int count(const char *text, long max) {
  if (text == NULL || *text == '\0') return -1;
  char *end;
  long n = strtol(text, &end, 10);
  return *end != '\0' || n < 0 || n > max ? -1 : (int)n;
}

/* Reads the facts and appends their reading; 0, or -1 for a malformed list. */
static int observe_facts(struct fields *f, struct text *t) {
  int n = count(next(f), 100000);
  if (n < 0) return -1;
  for (int i = 0; i < n; i++) {
    const char *kind = next(f), *arg = next(f), *fields = next(f);
    if (kind == NULL || arg == NULL || fields == NULL) return -1;
    observe_fact(t, kind, arg, fields);
  }
  return 0;
}

static int read_all(int fd, struct text *t, size_t max) {
  char buffer[65536];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) {
    if (t->len + (size_t)n > max) return -1;
    put(t, buffer, (size_t)n);
  }
  return n < 0 ? -1 : 0;
}

static int observe(void) {
  struct text input = {0}, reading = {0};
  if (read_all(0, &input, MAX_ENTRY_BYTES) != 0) return 2;
  if (input.bytes == NULL) return 2;
  struct fields f = {input.bytes, input.bytes + input.len};
  if (observe_facts(&f, &reading) != 0) return 2;
  if (reading.len > 0 && fwrite(reading.bytes, 1, reading.len, stdout) != reading.len) return 2;
  return fflush(stdout) == 0 ? 0 : 2;
}

/* A miss: the entry this start would have, for the launcher to write. */
static int miss(const char *entry) {
  printf("%s", entry);
  return fflush(stdout) == 0 ? 1 : 2;
}

static int check(const char *dir, const char *salt, int argc, char **argv) {
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == NULL) return 2;
  uint64_t key = fnv(14695981039346656037ULL, salt, strlen(salt) + 1);
  key = fnv(key, cwd, strlen(cwd) + 1);
  char argc_text[16];
  snprintf(argc_text, sizeof argc_text, "%d", argc);
  key = fnv(key, argc_text, strlen(argc_text) + 1);
  for (int i = 0; i < argc; i++) key = fnv(key, argv[i], strlen(argv[i]) + 1);
  char entry[PATH_MAX];
  int n = snprintf(entry, sizeof entry, "%s/%016llx", dir, (unsigned long long)key);
  if (n < 0 || (size_t)n >= sizeof entry) return 2;

  /* The folder and the entry are this user's alone: a start another user
     could have written is never reused (the script evals it). */
  uid_t me = getuid();
  struct stat folder, file;
  if (lstat(dir, &folder) != 0 || !S_ISDIR(folder.st_mode) || folder.st_uid != me ||
      (folder.st_mode & 077) != 0) {
    return miss(entry);
  }
  int fd = open(entry, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return miss(entry);
  struct text bytes = {0};
  int ok = fstat(fd, &file) == 0 && S_ISREG(file.st_mode) && file.st_uid == me &&
           (file.st_mode & 022) == 0 && read_all(fd, &bytes, MAX_ENTRY_BYTES) == 0;
  close(fd);
  if (!ok || bytes.bytes == NULL) return miss(entry);

  struct fields f = {bytes.bytes, bytes.bytes + bytes.len};
  const char *magic = next(&f), *its_salt = next(&f), *its_cwd = next(&f);
  if (magic == NULL || strcmp(magic, MAGIC) != 0 || its_salt == NULL || strcmp(its_salt, salt) != 0 ||
      its_cwd == NULL || strcmp(its_cwd, cwd) != 0 || count(next(&f), 1 << 20) != argc) {
    return miss(entry);
  }
  for (int i = 0; i < argc; i++) {
    const char *arg = next(&f);
    if (arg == NULL || strcmp(arg, argv[i]) != 0) return miss(entry);
  }
  struct text reading = {0};
  if (observe_facts(&f, &reading) != 0) return miss(entry);
  const char *seen = next(&f), *start = next(&f);
  if (seen == NULL || start == NULL || strcmp(seen, reading.bytes == NULL ? "" : reading.bytes) != 0) {
    return miss(entry);
  }
  size_t len = strlen(start);
  if (len == 0 || fwrite(start, 1, len, stdout) != len) return 2;
  return fflush(stdout) == 0 ? 0 : 2;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "observe") == 0) return observe();
  if (argc >= 4 && strcmp(argv[1], "check") == 0) return check(argv[2], argv[3], argc - 4, argv + 4);
  fprintf(stderr, "usage: htmcp-start check CACHE_DIR SALT [ARG...] | htmcp-start observe\n");
  return 2;
}
