/* test_outcome.c - outcome.c: the exit status of each way a command ends,
 * the sentence the user reads, and the JSON form read back as it was
 * written (what the session client and the MCP server rely on). */
#include <signal.h>
#include <string.h>

#include "base/outcome.h"
#include "base/syncmsg.h"
#include "unit.h"

static struct sbx_outcome make(enum sbx_end reason, int code, int sig, uint64_t limit)
{
	struct sbx_outcome o = { .reason = reason, .code = code, .signal = sig, .limit = limit };
	return o;
}

static void test_status(void)
{
	struct sbx_outcome o = make(SBX_END_EXIT, 3, 0, 0);
	CHECK(outcome_status(&o) == 3);
	o = make(SBX_END_SIGNAL, 0, SIGTERM, 0);
	CHECK(outcome_status(&o) == 128 + SIGTERM);
	o = make(SBX_END_TIMEOUT, 0, SIGKILL, 1000);
	CHECK(outcome_status(&o) == 124);
	o = make(SBX_END_OOM, 0, SIGKILL, 64 << 20);
	CHECK(outcome_status(&o) == 137);
	o = make(SBX_END_DISK, 0, SIGKILL, 16 << 20);
	CHECK(outcome_status(&o) == 137);
	/* a refused fork: the command ended itself, with its own code */
	o = make(SBX_END_PIDS, 2, 0, 0);
	CHECK(outcome_status(&o) == 2);
	o = make(SBX_END_ERROR, 127, 0, 0);
	CHECK(outcome_status(&o) == 127);
	o = make(SBX_END_ERROR, 126, 0, 0);
	CHECK(outcome_status(&o) == 126);
	o = make(SBX_END_ERROR, 0, 0, 0);
	CHECK(outcome_status(&o) == 125);
	o = make(SBX_END_NONE, 0, 0, 0);
	CHECK(outcome_status(&o) == 125);
}

static void test_sentence(void)
{
	char buf[1600];
	struct sbx_outcome o = make(SBX_END_TIMEOUT, 0, SIGKILL, 1500);

	outcome_sentence(&o, buf, sizeof(buf));
	CHECK_STR(buf, "timeout: the command ran longer than 1500ms and was killed");
	o = make(SBX_END_OOM, 0, SIGKILL, 64 << 20);
	outcome_sentence(&o, buf, sizeof(buf));
	CHECK_STR(buf, "out of memory: the sandbox reached its memory limit (64M) and was killed");
	o.accounted = 1;
	outcome_sentence(&o, buf, sizeof(buf));
	CHECK_STR(buf, "out of memory (accounted by sbxrun, no cgroup): the sandbox reached its memory "
		  "limit (64M) and was killed");
	o = make(SBX_END_DISK, 0, SIGKILL, 16 << 20);
	outcome_sentence(&o, buf, sizeof(buf));
	CHECK_STR(buf, "disk quota: the sandbox wrote more than 16M on disk and was killed");
	o = make(SBX_END_PIDS, 2, 0, 0);
	outcome_sentence(&o, buf, sizeof(buf));
	CHECK_CONTAINS(buf, "process limit");
	o = make(SBX_END_EXIT, 1, 0, 0);
	outcome_sentence(&o, buf, sizeof(buf));
	CHECK_STR(buf, "");
	outcome_render(&o, buf, sizeof(buf));
	CHECK_STR(buf, "");
	o = make(SBX_END_SIGNAL, 0, SIGKILL, 0);
	outcome_render(&o, buf, sizeof(buf));
	CHECK_STR(buf, "");
	/* an error with its hint, and what cannot reach a terminal raw */
	outcome_error(&o, SBX_ORIGIN_SETUP, "--bind: open 'x\033[2J': No such file or directory");
	snprintf(o.hint, sizeof(o.hint), "it is gone");
	outcome_render(&o, buf, sizeof(buf));
	CHECK(strchr(buf, '\033') == NULL);
	CHECK_CONTAINS(buf, "sbxrun: error: --bind: open 'x");
	CHECK_CONTAINS(buf, "\nhint: it is gone\n");
	CHECK(outcome_status(&o) == 125);
}

static void round_trip(const struct sbx_outcome *o)
{
	struct json_object *j = json_object_new_object();
	outcome_to_json(o, j);
	/* through text, as it travels */
	struct json_object *back = json_tokener_parse(json_object_to_json_string(j));
	struct sbx_outcome r;
	char a[1600], b[1600];

	CHECK(outcome_from_json(back, &r) == 0);
	CHECK(r.reason == o->reason);
	CHECK(outcome_status(&r) == outcome_status(o));
	CHECK(r.signal == o->signal);
	CHECK(r.duration_ms == o->duration_ms && r.peak_memory == o->peak_memory);
	CHECK(r.origin == o->origin && r.accounted == o->accounted);
	CHECK_STR(r.message, o->message);
	CHECK_STR(r.hint, o->hint);
	outcome_sentence(o, a, sizeof(a));
	outcome_sentence(&r, b, sizeof(b));
	CHECK_STR(b, a);
	json_object_put(j);
	json_object_put(back);
}

static void test_json(void)
{
	struct sbx_outcome o = make(SBX_END_EXIT, 3, 0, 0);
	o.duration_ms = 42;
	o.peak_memory = 1 << 20;
	round_trip(&o);
	o = make(SBX_END_SIGNAL, 0, SIGTERM, 0);
	round_trip(&o);
	o = make(SBX_END_TIMEOUT, 0, SIGKILL, 2000);
	round_trip(&o);
	o = make(SBX_END_OOM, 0, SIGKILL, 64 << 20);
	o.accounted = 1;
	round_trip(&o);
	o = make(SBX_END_OOM, 1, 0, 64 << 20);
	round_trip(&o);
	o = make(SBX_END_DISK, 0, SIGKILL, 16 << 20);
	round_trip(&o);
	o = make(SBX_END_PIDS, 2, 0, 0);
	round_trip(&o);
	outcome_error(&o, SBX_ORIGIN_COMMAND, "'nosuch': command not found");
	o.code = 127;
	round_trip(&o);
	outcome_error(&o, SBX_ORIGIN_SETUP, "--bind: open '/gone': No such file or directory");
	snprintf(o.hint, sizeof(o.hint), "the source was there when sbxrun checked it");
	round_trip(&o);

	/* the keys a caller of the control socket has always read */
	struct json_object *j = json_object_new_object(), *v;
	o = make(SBX_END_TIMEOUT, 0, SIGKILL, 2000);
	outcome_to_json(&o, j);
	CHECK(json_object_object_get_ex(j, "exit_code", &v) && json_object_get_int(v) == 124);
	CHECK(json_object_object_get_ex(j, "reason", &v) && !strcmp(json_object_get_string(v), "timeout"));
	CHECK(json_object_object_get_ex(j, "signal", &v) && json_object_get_int(v) == SIGKILL);
	CHECK(!json_object_object_get_ex(j, "error", &v));
	json_object_put(j);

	/* strict: an unknown reason or no exit code is not an outcome */
	struct sbx_outcome r;
	j = json_tokener_parse("{\"exit_code\": 1, \"reason\": \"mem\"}");
	CHECK(outcome_from_json(j, &r) < 0);
	json_object_put(j);
	j = json_tokener_parse("{\"reason\": \"exit\"}");
	CHECK(outcome_from_json(j, &r) < 0);
	json_object_put(j);
	CHECK(outcome_from_json(NULL, &r) < 0);
}

/* What the child knows reaches the host whole: message, errno, hint, origin. */
static void test_sync_error(void)
{
	struct sbx_err err = { 0 };
	struct sbx_msg m = { .type = SBX_MSG_ERROR, .errnum = 2, .origin = SBX_ORIGIN_SETUP };
	struct sbx_outcome o = { 0 };
	struct sbx_err back = { 0 };

	err_set(&err, 2, "--bind: open '/gone'");
	err_hint(&err, "it is gone");
	snprintf(m.text, sizeof(m.text), "%s", err.msg);
	snprintf(m.hint, sizeof(m.hint), "%s", err.hint);
	msg_error_outcome(&m, &o);
	CHECK(o.reason == SBX_END_ERROR && o.origin == SBX_ORIGIN_SETUP);
	CHECK_CONTAINS(o.message, "--bind: open '/gone': ");
	CHECK_STR(o.hint, "it is gone");
	CHECK(msg_error(&m, &back) < 0);
	CHECK(back.errnum == 2);
	CHECK_STR(back.hint, "it is gone");
}

int main(void)
{
	test_status();
	test_sentence();
	test_json();
	test_sync_error();
	return unit_done("test_outcome");
}
