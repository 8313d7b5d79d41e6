/* outcome.h - how a command ended, as one value: why (exit, signal,
 * timeout, out of memory, process limit, disk quota, error), its code and
 * signal, how long it ran and its peak memory, and the error with its hint
 * and where it arose. One mapping to sbxrun's exit status, one sentence for
 * the user and one JSON form (the session's reply, --json, the MCP server)
 * with its parser: every front end renders only this. */
#ifndef SBX_OUTCOME_H
#define SBX_OUTCOME_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

enum sbx_end {
	SBX_END_NONE = 0, /* not ended yet */
	SBX_END_EXIT,     /* the command exited: code */
	SBX_END_SIGNAL,   /* a signal ended the command: signal */
	SBX_END_TIMEOUT,  /* killed at its wall-clock timeout: 124 */
	SBX_END_OOM,      /* the memory limit: the kernel's OOM killer, or sbxrun's sum */
	SBX_END_PIDS,     /* the process limit refused a fork and the command failed */
	SBX_END_DISK,     /* killed past the disk quota (storage on disk) */
	SBX_END_ERROR,    /* it did not run: code 125 (sbxrun), 126 or 127 (exec) */
};

/* Where an error arose. */
enum sbx_origin {
	SBX_ORIGIN_NONE = 0,
	SBX_ORIGIN_HOST,    /* sbxrun's own process */
	SBX_ORIGIN_SETUP,   /* the sandbox's set-up (namespaces, mounts) */
	SBX_ORIGIN_INIT,    /* the sandbox's pid 1 */
	SBX_ORIGIN_COMMAND, /* the command's child before or at exec */
	SBX_ORIGIN_SESSION, /* the session's supervisor */
};

struct sbx_outcome {
	enum sbx_end reason;
	int code;             /* EXIT: its exit code; ERROR: 125, 126 or 127 */
	int signal;           /* the signal that ended the command, 0 if none */
	uint64_t duration_ms;
	uint64_t peak_memory; /* bytes, 0 if unknown */
	uint64_t limit;       /* the limit that ended it: TIMEOUT ms, OOM and DISK bytes */
	int accounted;        /* OOM: sbxrun's own sum (no memory cgroup) */
	enum sbx_origin origin;
	char message[900];    /* ERROR: what failed (with its errno text) */
	char hint[256];       /* at most one hint, or "" */
};

/* The status sbxrun exits with: 124 timeout, 125 sbxrun failed, 126/127
 * exec, 128+N for signal N, else the command's exit code. */
int outcome_status(const struct sbx_outcome *o);
const char *outcome_reason_name(enum sbx_end reason);
const char *outcome_origin_name(enum sbx_origin origin);
/* The one sentence for the user ("timeout: the command ran longer than 1s
 * and was killed"), without "sbxrun: "; "" when the command just exited or
 * a signal it got ended it. */
void outcome_sentence(const struct sbx_outcome *o, char *buf, size_t size);
/* What a front end prints on stderr: "sbxrun: SENTENCE\n" and "hint:
 * HINT\n", sanitised; "" when there is nothing to say. */
void outcome_render(const struct sbx_outcome *o, char *buf, size_t size);
/* Adds the outcome's keys to obj: exit_code, signal, reason, duration_ms,
 * peak_memory_bytes, and where set limit, memory_accounted, error, hint,
 * origin. */
void outcome_to_json(const struct sbx_outcome *o, struct json_object *obj);
/* The reverse, strict: -1 when exit_code or reason is missing or unknown. */
int outcome_from_json(struct json_object *obj, struct sbx_outcome *o);
/* Sets reason ERROR with code 125 and the message. */
void outcome_error(struct sbx_outcome *o, enum sbx_origin origin, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
