-- swf_chain 1.0: the trigger function of swf's hash chain in C (history/CHAIN.md).
-- `swf db migrate` points the events_chain trigger at it (history/pg_chain.c).

\echo Use "CREATE EXTENSION swf_chain" to load this file. \quit

CREATE FUNCTION swf_chain_events() RETURNS trigger
    LANGUAGE C AS 'MODULE_PATHNAME', 'swf_chain_events';

COMMENT ON FUNCTION swf_chain_events() IS
    'BEFORE INSERT FOR EACH ROW on swf''s events: the hash of migration 7''s swf_events_chain(), in C';
