/* outcome.c - how a command ended: its exit status, its sentence for the
 * user and its JSON form, one of each for every front end. */
#include "base/outcome.h"

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

static const char *const reasons[] = {
	[SBX_END_NONE] = "none", [SBX_END_EXIT] = "exit", [SBX_END_SIGNAL] = "signal",
	[SBX_END_TIMEOUT] = "timeout", [SBX_END_OOM] = "oom", [SBX_END_PIDS] = "pids",
	[SBX_END_DISK] = "disk", [SBX_END_ERROR] = "error",
};

static const char *const origins[] = {
	[SBX_ORIGIN_NONE] = "", [SBX_ORIGIN_HOST] = "host", [SBX_ORIGIN_SETUP] = "setup",
	[SBX_ORIGIN_INIT] = "init", [SBX_ORIGIN_COMMAND] = "command", [SBX_ORIGIN_SESSION] = "session",
};

int outcome_status(const struct sbx_outcome *o)
{
	switch (o->reason) {
	case SBX_END_TIMEOUT:
		return 124;
	case SBX_END_ERROR:
		return o->code >= 125 && o->code <= 127 ? o->code : 125;
	case SBX_END_NONE:
		return 125;
	default:
		return o->signal ? 128 + o->signal : o->code;
	}
}

const char *outcome_reason_name(enum sbx_end reason)
{
	return (unsigned)reason < ARRAY_SIZE(reasons) ? reasons[reason] : "none";
}

const char *outcome_origin_name(enum sbx_origin origin)
{
	return (unsigned)origin < ARRAY_SIZE(origins) ? origins[origin] : "";
}

void outcome_sentence(const struct sbx_outcome *o, char *buf, size_t size)
{
	char v[32] = "";

	switch (o->reason) {
	case SBX_END_TIMEOUT:
		if (o->limit)
			format_duration(o->limit, v, sizeof(v));
		snprintf(buf, size, "timeout: the command ran longer than %s and was killed",
			 o->limit ? v : "its timeout");
		break;
	case SBX_END_OOM:
		if (o->limit)
			format_size(o->limit, v, sizeof(v));
		snprintf(buf, size, "out of memory%s: the sandbox reached its memory limit%s%s%s and was killed",
			 o->accounted ? " (accounted by sbxrun, no cgroup)" : "", o->limit ? " (" : "", v,
			 o->limit ? ")" : "");
		break;
	case SBX_END_DISK:
		if (o->limit)
			format_size(o->limit, v, sizeof(v));
		snprintf(buf, size, "disk quota: the sandbox wrote more than %s on disk and was killed",
			 o->limit ? v : "its quota");
		break;
	case SBX_END_PIDS:
		snprintf(buf, size, "process limit: the sandbox reached its process limit (--pids) and a fork failed");
		break;
	case SBX_END_ERROR:
	case SBX_END_NONE:
		snprintf(buf, size, "error: %s", o->message[0] ? o->message : "the command did not run");
		break;
	default:
		buf[0] = '\0';
	}
}

void outcome_render(const struct sbx_outcome *o, char *buf, size_t size)
{
	char s[1200], clean[1200], hint[sizeof(o->hint)];

	outcome_sentence(o, s, sizeof(s));
	buf[0] = '\0';
	if (!s[0])
		return;
	log_sanitize(clean, sizeof(clean), s);
	log_sanitize(hint, sizeof(hint), o->hint);
	snprintf(buf, size, "sbxrun: %s\n%s%s%s", clean, hint[0] ? "hint: " : "", hint, hint[0] ? "\n" : "");
}

static void add_int(struct json_object *obj, const char *key, int64_t v)
{
	json_object_object_add(obj, key, json_object_new_int64(v));
}

void outcome_to_json(const struct sbx_outcome *o, struct json_object *obj)
{
	add_int(obj, "exit_code", outcome_status(o));
	add_int(obj, "signal", o->signal);
	json_object_object_add(obj, "reason", json_object_new_string(outcome_reason_name(o->reason)));
	add_int(obj, "duration_ms", (int64_t)o->duration_ms);
	add_int(obj, "peak_memory_bytes", (int64_t)o->peak_memory);
	if (o->limit)
		add_int(obj, "limit", (int64_t)o->limit);
	if (o->accounted)
		json_object_object_add(obj, "memory_accounted", json_object_new_boolean(1));
	if (o->reason == SBX_END_ERROR || o->message[0])
		json_object_object_add(obj, "error", json_object_new_string(o->message));
	if (o->hint[0])
		json_object_object_add(obj, "hint", json_object_new_string(o->hint));
	if (o->origin)
		json_object_object_add(obj, "origin", json_object_new_string(outcome_origin_name(o->origin)));
}

static int get(struct json_object *obj, const char *key, json_type t, struct json_object **v)
{
	return json_object_object_get_ex(obj, key, v) && json_object_is_type(*v, t);
}

static int64_t get_int(struct json_object *obj, const char *key)
{
	struct json_object *v;
	return get(obj, key, json_type_int, &v) ? json_object_get_int64(v) : 0;
}

static void get_str(struct json_object *obj, const char *key, char *buf, size_t size)
{
	struct json_object *v;
	snprintf(buf, size, "%s", get(obj, key, json_type_string, &v) ? json_object_get_string(v) : "");
}

int outcome_from_json(struct json_object *obj, struct sbx_outcome *o)
{
	struct json_object *v, *r;
	char name[32];

	memset(o, 0, sizeof(*o));
	if (!obj || !get(obj, "exit_code", json_type_int, &v) || !get(obj, "reason", json_type_string, &r))
		return -1;
	int status = json_object_get_int(v);
	for (size_t i = 1; i < ARRAY_SIZE(reasons); i++)
		if (strcmp(json_object_get_string(r), reasons[i]) == 0)
			o->reason = (enum sbx_end)i;
	if (o->reason == SBX_END_NONE)
		return -1;
	o->signal = (int)get_int(obj, "signal");
	o->code = o->signal ? 0 : status;
	o->duration_ms = (uint64_t)get_int(obj, "duration_ms");
	o->peak_memory = (uint64_t)get_int(obj, "peak_memory_bytes");
	o->limit = (uint64_t)get_int(obj, "limit");
	o->accounted = get(obj, "memory_accounted", json_type_boolean, &v) && json_object_get_boolean(v);
	get_str(obj, "error", o->message, sizeof(o->message));
	get_str(obj, "hint", o->hint, sizeof(o->hint));
	get_str(obj, "origin", name, sizeof(name));
	for (size_t i = 1; i < ARRAY_SIZE(origins); i++)
		if (strcmp(name, origins[i]) == 0)
			o->origin = (enum sbx_origin)i;
	return 0;
}

void outcome_error(struct sbx_outcome *o, enum sbx_origin origin, const char *fmt, ...)
{
	va_list ap;

	o->reason = SBX_END_ERROR;
	o->code = 125;
	o->origin = origin;
	va_start(ap, fmt);
	vsnprintf(o->message, sizeof(o->message), fmt, ap);
	va_end(ap);
}
