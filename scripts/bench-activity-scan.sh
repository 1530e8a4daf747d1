#!/bin/sh
# bench-activity-scan.sh - what one swf-history tick costs to find the
# activities past a deadline, the old way (reading every open history for
# ActivityTaskScheduled events that nothing closed) against the
# activity_timeouts projection (migration 4), on the same data: EXECUTIONS
# open executions of ACTIVITIES activities each (a 3600 s start-to-close
# timeout, all closed but the last). Three runs of each query.
#
# usage: scripts/bench-activity-scan.sh [BUILD_DIR] [EXECUTIONS] [ACTIVITIES]
#        (defaults: build 200 1000)
set -eu
build=${1:-build}
executions=${2:-200}
activities=${3:-1000}
[ -x "$build/swf" ] || { echo "no $build/swf: build first" >&2; exit 2; }

. "$(dirname "$0")/throwaway-pg.sh"

SWF_DATABASE_URL="$conn" "$build/swf" db migrate >/dev/null
"$bindir/psql" "$conn" -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO executions SELECT 'x' || e, 'x' || e, 'm', '1', 'open', now(), NULL, 1
  FROM generate_series(1, $executions) e;
-- In id order: the hash chain's trigger refuses an event with no event
-- before it (history/CHAIN.md).
INSERT INTO events SELECT 'x' || e, i,
  CASE WHEN i = 1 THEN 'WorkflowExecutionStarted' WHEN i % 2 = 0 THEN 'ActivityTaskScheduled'
    ELSE 'ActivityTaskCompleted' END, now(),
  CASE WHEN i = 1 THEN '{}'
    WHEN i % 2 = 0 THEN '{"startToCloseTimeout": 3600, "taskList": {"name": "q"}}'
    ELSE jsonb_build_object('scheduledEventId', i - 1) END
  FROM generate_series(1, $executions) e, generate_series(1, 2 * $activities) i
  ORDER BY 1, 2;
INSERT INTO activity_timeouts SELECT 'x' || e, 2 * $activities, now(), 3600, NULL, NULL
  FROM generate_series(1, $executions) e;
ANALYZE;
SQL

old="SELECT count(*) FROM (SELECT s.execution_id, s.event_id
 FROM executions x JOIN events s ON s.execution_id = x.execution_id
 WHERE x.status = 'open' AND s.event_type = 'ActivityTaskScheduled'
 AND (s.attributes ? 'startToCloseTimeout' OR s.attributes ? 'heartbeatTimeout')
 AND NOT EXISTS (SELECT 1 FROM events c WHERE c.execution_id = s.execution_id
   AND c.event_id > s.event_id AND c.event_type IN ('ActivityTaskCompleted',
   'ActivityTaskFailed', 'ActivityTaskTimedOut', 'ActivityTaskCanceled')
   AND (c.attributes->>'scheduledEventId')::bigint = s.event_id)
 AND ((s.attributes ? 'startToCloseTimeout' AND s.event_time +
    (s.attributes->>'startToCloseTimeout')::float8 * interval '1 second' <= now())
  OR (s.attributes ? 'heartbeatTimeout' AND coalesce((SELECT max(h.event_time) FROM events h
    WHERE h.execution_id = s.execution_id AND h.event_id > s.event_id
    AND h.event_type = 'ActivityTaskHeartbeatRecorded'
    AND (h.attributes->>'scheduledEventId')::bigint = s.event_id), s.event_time) +
    (s.attributes->>'heartbeatTimeout')::float8 * interval '1 second' <= now()))
 LIMIT 500) q;"
new="SELECT count(*) FROM (SELECT a.execution_id, a.scheduled_event_id FROM activity_timeouts a
 WHERE (a.start_to_close IS NOT NULL
    AND a.scheduled_time + a.start_to_close * interval '1 second' <= now())
  OR (a.heartbeat IS NOT NULL AND coalesce(a.last_heartbeat, a.scheduled_time) +
    a.heartbeat * interval '1 second' <= now())
 LIMIT 500) q;"
timed() {
    printf '\\timing on\n%s\n%s\n%s\n' "$1" "$1" "$1" | "$bindir/psql" "$conn" -qAt |
        awk '/^Time:/ { printf " %s ms", $2 }'
}
echo "$executions open executions x $activities activities ($(( executions * activities * 2 )) events)"
echo "scan of the open histories (before migration 4):$(timed "$old")"
echo "activity_timeouts projection:                   $(timed "$new")"
