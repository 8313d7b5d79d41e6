/* proxy_event.c - the egress proxy's reports: an event per decision in the
 * --events file, a line on sbxrun's stderr per refused host (package
 * managers seldom show a 403's body), the 4xx/5xx responses, and an event
 * per name lookup the DNS stub answered. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "base/log.h"
#include "base/util.h"
#include "net/proxy_event.h"

#define MAX_REMEMBERED 512

void proxy_event_init(struct proxy_events *ev, const char *profile, int fd)
{
	memset(ev, 0, sizeof(*ev));
	ev->profile = xstrdup(profile ? profile : "?");
	ev->fd = fd;
}

void proxy_event_fini(struct proxy_events *ev)
{
	for (size_t i = 0; i < ev->nrefused; i++)
		free(ev->refused[i]);
	free(ev->refused);
	free(ev->profile);
	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
}

void proxy_event_write(int fd, json_object *o, const char *kind)
{
	struct timeval tv;
	char ts[64];

	if (fd < 0) {
		json_object_put(o);
		return;
	}
	gettimeofday(&tv, NULL);
	snprintf(ts, sizeof(ts), "%lld.%03d", (long long)tv.tv_sec, (int)(tv.tv_usec / 1000));
	json_object_object_add(o, "time", json_object_new_double_s((double)tv.tv_sec, ts));
	json_object_object_add(o, "event", json_object_new_string(kind));
	const char *line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	/* One write per line: the credential broker's threads write too. An
	 * events file that stops taking writes must not stop the relay. */
	size_t n = strlen(line);
	char *buf = xmalloc(n + 1);
	memcpy(buf, line, n);
	buf[n] = '\n';
	(void)!write_all(fd, buf, n + 1);
	free(buf);
	json_object_put(o);
}

static void emit(struct proxy_events *ev, json_object *o, const char *kind)
{
	proxy_event_write(ev->fd, o, kind);
}

static json_object *base(const char *host, int port, const char *decision)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "port", json_object_new_int(port));
	json_object_object_add(o, "decision", json_object_new_string(decision));
	return o;
}

static void tell_once(struct proxy_events *ev, const char *host, const char *reason)
{
	char shost[300], sreason[300];

	for (size_t i = 0; i < ev->nrefused; i++)
		if (strcmp(ev->refused[i], host) == 0)
			return;
	if (ev->nrefused < MAX_REMEMBERED) {
		ev->refused = xrealloc(ev->refused, (ev->nrefused + 1) * sizeof(*ev->refused));
		ev->refused[ev->nrefused++] = xstrdup(host);
	}
	log_sanitize(shost, sizeof(shost), host);
	log_sanitize(sreason, sizeof(sreason), reason);
	if (*host)
		fprintf(stderr, "sbxrun: egress: refused '%s' (%s)\n", shost, sreason);
	else
		fprintf(stderr, "sbxrun: egress: refused a malformed request (%s)\n", sreason);
}

void proxy_event_decision(struct proxy_events *ev, const char *host, int port, const char *decision,
			  const char *reason)
{
	json_object *o = base(host, port, decision);
	json_object_object_add(o, "reason", json_object_new_string(reason));
	emit(ev, o, "egress");
	if (strcmp(decision, "refused") == 0)
		tell_once(ev, host, reason);
}

void proxy_event_close(struct proxy_events *ev, const char *host, int port, uint64_t up, uint64_t down)
{
	json_object *o = base(host, port, "closed");
	json_object_object_add(o, "bytes_up", json_object_new_int64((int64_t)up));
	json_object_object_add(o, "bytes_down", json_object_new_int64((int64_t)down));
	emit(ev, o, "egress");
}

void proxy_event_dns(struct proxy_events *ev, const char *name, const char *type, const char *answer,
		     int rcode, uint64_t left_out)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "type", json_object_new_string(type));
	json_object_object_add(o, "answer", json_object_new_string(answer));
	if (rcode)
		json_object_object_add(o, "rcode", json_object_new_int(rcode));
	if (left_out)
		json_object_object_add(o, "lookups_not_told", json_object_new_int64((int64_t)left_out));
	emit(ev, o, "dns");
}

void proxy_event_dns_limit(struct proxy_events *ev, uint64_t dropped, uint64_t total, unsigned rate)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "dropped", json_object_new_int64((int64_t)dropped));
	json_object_object_add(o, "dropped_total", json_object_new_int64((int64_t)total));
	json_object_object_add(o, "rate", json_object_new_int((int)rate));
	emit(ev, o, "dns_limit");
}

static const char *status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 407: return "Proxy Authentication Required";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 504: return "Gateway Timeout";
	}
	return "Error";
}

int proxy_event_response(const struct proxy_events *ev, char *buf, size_t size, int status,
			 const char *host, const char *why)
{
	char body[700], shost[300], swhy[300];
	int n;

	/* A peer without the proxy's secret learns nothing of its profile. */
	if (status == 407) {
		static const char msg[] = "sbxrun: proxy authentication required\n";
		n = snprintf(buf, size,
			     "HTTP/1.1 407 %s\r\nProxy-Authenticate: Basic realm=\"sbxrun\"\r\n"
			     "Content-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			     status_text(407), sizeof(msg) - 1, msg);
		return n < 0 || (size_t)n >= size ? -1 : n;
	}

	/* The host passed the request parser (printable, no CR/LF), but the
	 * header must stay one line whatever changes upstream of here. */
	log_sanitize(shost, sizeof(shost), host);
	log_sanitize(swhy, sizeof(swhy), why);
	n = snprintf(body, sizeof(body), "sbxrun: egress %s '%s' by profile '%s': %s\n",
		     status == 403 ? "refused" : "failed for", shost, ev->profile, swhy);
	n = snprintf(buf, size,
		     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
		     "X-Sbxrun-Refused: profile=%s; host=%s\r\nConnection: close\r\n\r\n%s",
		     status, status_text(status), n, ev->profile, shost, body);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

void proxy_event_rule(struct proxy_events *ev, const char *rule, const char *entry, const char *by)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "rule", json_object_new_string(rule));
	json_object_object_add(o, "host", json_object_new_string(entry));
	json_object_object_add(o, "by", json_object_new_string(by));
	emit(ev, o, "rule");
}

void proxy_event_cut(struct proxy_events *ev, const char *host, int port, const char *reason)
{
	json_object *o = base(host, port, "cut");
	json_object_object_add(o, "reason", json_object_new_string(reason));
	emit(ev, o, "egress");
}

void proxy_event_policy(struct proxy_events *ev, const char *what, const char *error)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "policy", json_object_new_string(what));
	if (error)
		json_object_object_add(o, "error", json_object_new_string(error));
	emit(ev, o, "policy");
}

void proxy_event_hosts(struct proxy_events *ev, const char *allow, const char *by)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "allow", json_object_new_string(allow));
	json_object_object_add(o, "by", json_object_new_string(by ? by : "?"));
	emit(ev, o, "rules");
}

void proxy_event_credential(int fd, const char *var, const char *host, int port, const char *decision)
{
	json_object *o = base(host, port, decision);
	json_object_object_add(o, "var", json_object_new_string(var));
	proxy_event_write(fd, o, "credential");
}

void proxy_event_decision_fd(int fd, const char *host, int port, const char *decision, const char *reason)
{
	json_object *o = base(host, port, decision);
	json_object_object_add(o, "reason", json_object_new_string(reason));
	proxy_event_write(fd, o, "egress");
}
