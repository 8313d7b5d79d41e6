/* control.h - the session control protocol: one JSON object per message on
 * a SOCK_SEQPACKET unix socket, file descriptors alongside (SCM_RIGHTS).
 *
 * Requests (client → session):
 *   {"op":"exec","cmd":["ARG0",...],"workdir":"/x","env":["K=V"],"user":"NAME",
 *    "timeout_ms":N,"tty":false,"rows":R,"cols":C}   with fds 0,1,2 attached,
 *      or none: then stdin is empty and stdout/stderr come back in the reply
 *   {"op":"signal","signal":N}      forwards a signal to the running command
 *   {"op":"info"}                   {"name":..,"image":..,"profile":..,"pid":..,"started":..}
 *   {"op":"root"}                   {"workspace":"/w","image":..} with the root's O_PATH fd
 *   {"op":"layer"}                  {"upper":"layer/upper","ws":"ws",..} with the staging
 *                                   directory's and the root's O_PATH fds (a snapshot)
 *   {"op":"net","action":"allow|deny","host":"HOST[:PORT]","for":"once|session"}
 *                                   a live rule for its egress proxy: {"ok":true}
 *   {"op":"rules"}                  {"egress":MODE,"rules":[{"rule":KIND,"host":ENTRY}]}
 *                                   (net/proxy.h, proxy_rules_each)
 *   {"op":"pending"}                {"pending":[{"host":..,"port":N,"waited_ms":N,"left_ms":N}]}:
 *                                   connections held for an answer ([network] ask)
 *   {"op":"stop"}                   ends the session
 * Replies (session → client):
 *   {"event":"pty"}                 with the terminal's master fd (tty requests)
 *   {"exit_code":N,"signal":S,"reason":"exit|signal|timeout|error",
 *    "duration_ms":N[,"stdout":"..","stderr":".."][,"error":".."]}
 */
#ifndef SBX_CONTROL_H
#define SBX_CONTROL_H

#include <json-c/json.h>
#include <stddef.h>

#include "base/err.h"

#define SBX_CONTROL_MAX 65536

int control_send(int sock, struct json_object *obj, const int *fds, size_t nfds);
/* Returns 0 and a parsed object, 1 at EOF, -1 on error. */
int control_recv(int sock, struct json_object **obj, int *fds, size_t *nfds, size_t maxfds);
/* Checks that the peer is the same user and not inside a sandbox (its user
 * namespace is ours). */
int control_check_peer(int sock, struct sbx_err *err);

#endif
