/*
 * swf_chain.c - the hash chain's trigger (history/CHAIN.md) as a PostgreSQL
 * server extension: an optional accelerator of migration 7's plpgsql
 * trigger that stores the same hashes, byte for byte.
 *
 * Why: the plpgsql trigger costs a step's append ~25-30 us an event in
 * three parts (bench/README.md, "The append with the hash chain"): an SPI
 * query for the previous event's hash (~12 us), building the canonical
 * form in SQL expressions and hashing it (~10-15 us), and plpgsql's call
 * (~3 us). Here the previous hash is one probe of the table's primary-key
 * index, and the canonical form is fed to SHA-256 field by field, never
 * built. swf works without it (the binary is the whole product, and a
 * managed PostgreSQL loads no extension of ours): `swf db migrate` points
 * the trigger at this function where the server has it (history/
 * pg_chain.c), and back at plpgsql otherwise.
 *
 * The canonical form, as migration 7 computes it: SHA-256 of the previous
 * hash (32 zero bytes before event 1) and the netstrings of the execution
 * id, the event id in decimal, the type, the event time in microseconds
 * since 1970 in decimal, and the attributes as jsonb prints them (jsonb's
 * output function, which `attributes::text` calls), each text in UTF-8.
 * The errors are the plpgsql trigger's: SQLSTATE SWF02 for a hash given
 * that the chain does not give and for an event with no event before it,
 * its messages and hints, and PostgreSQL's own where its SQL would fail
 * (an infinite time, an event id one below which does not exist).
 *
 * What it reads is the trigger's own relation (tg_relation), never a name
 * looked up through search_path: it works in any schema, and a temporary
 * table called events changes nothing. The columns are found by name and
 * type, the primary key must be a btree on (execution_id, event_id) with
 * the default operator classes; any other shape is refused with an error
 * naming what is wrong. The extension is trusted (a role with CREATE on
 * the database may create it, and anyone may attach the function to a
 * table of their own), so it must be harmless on any table and any row:
 * nothing here trusts the row's sizes or the table's shape without a check.
 *
 * Visibility: the previous event is read with SnapshotSelf, which sees
 * every committed row and every row of this transaction, rows this same
 * statement inserted earlier included (a step inserts its six events in
 * one INSERT). plpgsql's query in READ COMMITTED sees the same rows (a
 * fresh snapshot after a command-counter increment). Under REPEATABLE
 * READ or SERIALIZABLE plpgsql would not see an event another transaction
 * committed after this one's snapshot and refuse to chain to it; this
 * chains to it. Either way a stored hash is that of what is stored.
 *
 * Privileges: plpgsql's lookup is a query under the inserting role's
 * privileges and row security; this reads the table directly, so it checks
 * them itself: the role must be able to read the three columns it reads,
 * and a table whose row security applies to the role is refused.
 *
 * Limits: a field is at most PostgreSQL's 1 GB; the jsonb text is built in
 * one buffer (a StringInfo, which refuses past 1 GB with an error), the
 * other fields are hashed where they lie.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_type_d.h"
#include "commands/trigger.h"
#include "common/cryptohash.h"
#include "common/int.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/jsonb.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

PG_MODULE_MAGIC;

#define SWF_CHAIN_ERRCODE MAKE_SQLSTATE('S', 'W', 'F', '0', '2')
#define SWF_CHAIN_HASH_BYTES 32
/* The Unix epoch in PostgreSQL's timestamps (microseconds since 2000). */
#define SWF_CHAIN_UNIX_EPOCH_US ((int64)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

enum { COL_EXECUTION, COL_EVENT, COL_TYPE, COL_TIME, COL_ATTRIBUTES, COL_HASH, COLS };

static const struct {
    const char *name;
    Oid type;
    const char *type_name;
} chain_columns[COLS] = {
    {"execution_id", TEXTOID, "text"}, {"event_id", INT8OID, "bigint"},
    {"event_type", TEXTOID, "text"},   {"event_time", TIMESTAMPTZOID, "timestamptz"},
    {"attributes", JSONBOID, "jsonb"}, {"hash", BYTEAOID, "bytea"},
};

/* What a statement's calls learn of their relation once (fn_extra, in the
 * statement's memory): the columns, the primary key, who was checked. */
typedef struct {
    Oid relid;
    Oid checked_user; /* InvalidOid: privileges not checked yet */
    AttrNumber attnum[COLS];
    Oid pkey;
    Oid key_collation; /* of the key's execution_id */
} chain_shape_t;

PG_FUNCTION_INFO_V1(swf_chain_events);

static void chain_refuse_shape(Relation rel, const char *what) pg_attribute_noreturn();

static void chain_refuse_shape(Relation rel, const char *what)
{
    ereport(ERROR, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
                    errmsg("swf_chain: table \"%s\" %s", RelationGetRelationName(rel), what),
                    errhint("swf_chain_events() hashes swf's events table (execution_id text, "
                            "event_id bigint, event_type text, event_time timestamptz, "
                            "attributes jsonb, hash bytea, PRIMARY KEY (execution_id, "
                            "event_id))")));
}

/* Finds the columns and the primary key of rel into shape, or refuses. */
static void chain_shape_resolve(Relation rel, chain_shape_t *shape)
{
    TupleDesc desc = RelationGetDescr(rel);
    if (rel->rd_rel->relkind != RELKIND_RELATION)
        chain_refuse_shape(rel, "is not a plain table");
    for (int c = 0; c < COLS; c++) {
        shape->attnum[c] = InvalidAttrNumber;
        for (int i = 0; i < desc->natts; i++) {
            Form_pg_attribute a = TupleDescAttr(desc, i);
            if (a->attisdropped || strcmp(NameStr(a->attname), chain_columns[c].name) != 0)
                continue;
            if (a->atttypid != chain_columns[c].type)
                chain_refuse_shape(rel,
                                   psprintf("has column %s of another type than %s",
                                            chain_columns[c].name, chain_columns[c].type_name));
            shape->attnum[c] = a->attnum;
        }
        if (shape->attnum[c] == InvalidAttrNumber)
            chain_refuse_shape(rel, psprintf("has no column %s %s", chain_columns[c].name,
                                             chain_columns[c].type_name));
    }
    shape->pkey = RelationGetPrimaryKeyIndex(rel);
    if (!OidIsValid(shape->pkey))
        chain_refuse_shape(rel, "has no primary key");
    Relation index = index_open(shape->pkey, AccessShareLock);
    bool fits = index->rd_rel->relam == BTREE_AM_OID &&
                IndexRelationGetNumberOfKeyAttributes(index) == 2 &&
                index->rd_index->indkey.values[0] == shape->attnum[COL_EXECUTION] &&
                index->rd_index->indkey.values[1] == shape->attnum[COL_EVENT] &&
                index->rd_opfamily[0] == TEXT_BTREE_FAM_OID && index->rd_opcintype[0] == TEXTOID &&
                index->rd_opfamily[1] == INTEGER_BTREE_FAM_OID && index->rd_opcintype[1] == INT8OID;
    shape->key_collation = index->rd_indcollation[0];
    index_close(index, NoLock);
    if (!fits)
        chain_refuse_shape(rel, "has a primary key other than a btree on (execution_id, event_id) "
                                "with the default operator classes");
}

/* What plpgsql's lookup would need: SELECT on the columns read, and no row
 * security to apply (a direct read would bypass its policies). */
static void chain_privileges_check(Relation rel, const chain_shape_t *shape, Oid user)
{
    Oid relid = RelationGetRelid(rel);
    if (pg_class_aclcheck(relid, user, ACL_SELECT) != ACLCHECK_OK) {
        const int read[] = {COL_EXECUTION, COL_EVENT, COL_HASH};
        for (size_t i = 0; i < lengthof(read); i++)
            if (pg_attribute_aclcheck(relid, shape->attnum[read[i]], user, ACL_SELECT) !=
                ACLCHECK_OK)
                aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(rel));
    }
    if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("swf_chain: row-level security applies to table \"%s\"",
                               RelationGetRelationName(rel)),
                        errhint("the chain's trigger reads the previous event directly, past "
                                "any policy; use swf_events_chain() (plpgsql) on such a table")));
}

/* The statement's shape of rel, resolved on its first row. */
static const chain_shape_t *chain_shape_get(FunctionCallInfo fcinfo, Relation rel)
{
    chain_shape_t *shape = fcinfo->flinfo->fn_extra;
    if (shape == NULL || shape->relid != RelationGetRelid(rel)) {
        shape = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(*shape));
        chain_shape_resolve(rel, shape);
        shape->relid = RelationGetRelid(rel);
        fcinfo->flinfo->fn_extra = shape;
    }
    Oid user = GetUserId();
    if (shape->checked_user != user) {
        chain_privileges_check(rel, shape, user);
        shape->checked_user = user;
    }
    return shape;
}

/* The stored hash of event id of execution (a copy), or NULL when there is
 * no such event or its hash is NULL: one probe of the primary key. */
static bytea *chain_previous_hash(Relation rel, const chain_shape_t *shape, text *execution,
                                  int64 id)
{
    Relation index = index_open(shape->pkey, AccessShareLock);
    ScanKeyData keys[2];
    ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid, shape->key_collation,
                           F_TEXTEQ, PointerGetDatum(execution));
    ScanKeyEntryInitialize(&keys[1], 0, 2, BTEqualStrategyNumber, InvalidOid, InvalidOid, F_INT8EQ,
                           Int64GetDatum(id));
    IndexScanDesc scan = index_beginscan(rel, index, SnapshotSelf, 2, 0);
    index_rescan(scan, keys, 2, NULL, 0);
    TupleTableSlot *slot = table_slot_create(rel, NULL);
    bytea *hash = NULL;
    if (index_getnext_slot(scan, ForwardScanDirection, slot)) {
        bool null;
        Datum d = slot_getattr(slot, shape->attnum[COL_HASH], &null);
        if (!null)
            hash = DatumGetByteaPCopy(d);
    }
    ExecDropSingleTupleTableSlot(slot);
    index_endscan(scan);
    index_close(index, NoLock);
    return hash;
}

/* One field of the canonical form: its UTF-8 bytes. */
typedef struct {
    const char *data;
    int len;
} chain_field_t;

/* A text field in UTF-8 (converted when the database's encoding is
 * another; the conversion refuses what UTF-8 cannot hold). */
static chain_field_t chain_field_utf8(const char *data, int len)
{
    chain_field_t f = {data, len};
    if (GetDatabaseEncoding() != PG_UTF8) {
        char *converted = pg_server_to_any(data, len, PG_UTF8);
        if (converted != data) {
            f.data = converted;
            f.len = (int)strlen(converted);
        }
    }
    return f;
}

/* The event time in microseconds since 1970, as migration 7's
 * (EXTRACT(epoch FROM tm) * 1000000)::bigint gives it, errors included. */
static int64 chain_time_us(TimestampTz t)
{
    int64 us;
    if (TIMESTAMP_NOT_FINITE(t))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("cannot convert infinity to %s", "bigint")));
    if (pg_add_s64_overflow(t, SWF_CHAIN_UNIX_EPOCH_US, &us))
        ereport(ERROR,
                (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE), errmsg("bigint out of range")));
    return us;
}

/* SHA-256 of prev and the netstrings of fields, into out. Raises no error
 * while the context is open, so it is always freed here. */
static void chain_hash(const char *prev, int prev_len, const chain_field_t *fields, int n,
                       uint8 *out)
{
    pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
    if (ctx == NULL)
        ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
    bool ok = pg_cryptohash_init(ctx) == 0 &&
              pg_cryptohash_update(ctx, (const uint8 *)prev, (size_t)prev_len) == 0;
    for (int i = 0; ok && i < n; i++) {
        char head[16];
        int w = snprintf(head, sizeof(head), "%d:", fields[i].len);
        ok = w > 0 && (size_t)w < sizeof(head) &&
             pg_cryptohash_update(ctx, (const uint8 *)head, (size_t)w) == 0 &&
             pg_cryptohash_update(ctx, (const uint8 *)fields[i].data, (size_t)fields[i].len) == 0 &&
             pg_cryptohash_update(ctx, (const uint8 *)",", 1) == 0;
    }
    ok = ok && pg_cryptohash_final(ctx, out, SWF_CHAIN_HASH_BYTES) == 0;
    const char *why = ok ? NULL : pg_cryptohash_error(ctx);
    pg_cryptohash_free(ctx);
    if (!ok)
        ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                        errmsg("swf_chain: could not compute SHA-256: %s", why ? why : "?")));
}

/* A column's value as plpgsql's RAISE prints it in a message. */
static const char *chain_text_or_null(Datum d, bool null)
{
    return null ? "<NULL>" : TextDatumGetCString(d);
}

static const char *chain_id_or_null(Datum d, bool null, int64 minus)
{
    return null ? "<NULL>" : psprintf(INT64_FORMAT, DatumGetInt64(d) - minus);
}

/*
 * The trigger: BEFORE INSERT FOR EACH ROW. Follows migration 7's plpgsql
 * step by step, NULLs included (a NULL field gives a NULL hash, which the
 * column's NOT NULL then refuses, as there).
 */
Datum swf_chain_events(PG_FUNCTION_ARGS)
{
    if (!CALLED_AS_TRIGGER(fcinfo))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("swf_chain_events: not called by a trigger")));
    TriggerData *td = (TriggerData *)fcinfo->context;
    if (!TRIGGER_FIRED_BEFORE(td->tg_event) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
        !TRIGGER_FIRED_BY_INSERT(td->tg_event))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("swf_chain_events: must be fired BEFORE INSERT FOR EACH ROW")));
    Relation rel = td->tg_relation;
    const chain_shape_t *shape = chain_shape_get(fcinfo, rel);
    HeapTuple row = td->tg_trigtuple;
    TupleDesc desc = RelationGetDescr(rel);
    Datum v[COLS];
    bool null[COLS];
    for (int c = 0; c < COLS; c++)
        v[c] = heap_getattr(row, shape->attnum[c], desc, &null[c]);

    text *execution = null[COL_EXECUTION] ? NULL : DatumGetTextPP(v[COL_EXECUTION]);
    int64 id = null[COL_EVENT] ? 0 : DatumGetInt64(v[COL_EVENT]);
    static const char start[SWF_CHAIN_HASH_BYTES] = {0};
    const char *prev = start;
    int prev_len = SWF_CHAIN_HASH_BYTES;
    if (null[COL_EVENT] || id != 1) {
        int64 before = 0;
        if (!null[COL_EVENT] && pg_sub_s64_overflow(id, 1, &before))
            ereport(ERROR,
                    (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE), errmsg("bigint out of range")));
        bytea *hash = execution == NULL || null[COL_EVENT]
                          ? NULL
                          : chain_previous_hash(rel, shape, execution, before);
        if (hash == NULL)
            ereport(ERROR, (errcode(SWF_CHAIN_ERRCODE),
                            errmsg("execution %s: event %s has no event %s to chain to",
                                   chain_text_or_null(v[COL_EXECUTION], null[COL_EXECUTION]),
                                   chain_id_or_null(v[COL_EVENT], null[COL_EVENT], 0),
                                   chain_id_or_null(v[COL_EVENT], null[COL_EVENT], 1)),
                            errhint("event ids are dense from 1")));
        prev = VARDATA_ANY(hash);
        prev_len = (int)VARSIZE_ANY_EXHDR(hash);
    }

    /* The time first: plpgsql's expression fails on an infinite one
     * whatever else is NULL. */
    int64 time_us = null[COL_TIME] ? 0 : chain_time_us(DatumGetTimestampTz(v[COL_TIME]));
    bool hash_null = true;
    uint8 h[SWF_CHAIN_HASH_BYTES];
    if (!null[COL_EXECUTION] && !null[COL_EVENT] && !null[COL_TYPE] && !null[COL_TIME] &&
        !null[COL_ATTRIBUTES]) {
        text *type = DatumGetTextPP(v[COL_TYPE]);
        Jsonb *attributes = DatumGetJsonbP(v[COL_ATTRIBUTES]);
        StringInfoData json;
        initStringInfo(&json);
        (void)JsonbToCString(&json, &attributes->root, (int)VARSIZE(attributes));
        char id_text[24], time_text[24]; /* int8out's decimal, as i::text */
        snprintf(id_text, sizeof(id_text), INT64_FORMAT, id);
        snprintf(time_text, sizeof(time_text), INT64_FORMAT, time_us);
        chain_field_t fields[5] = {
            chain_field_utf8(VARDATA_ANY(execution), (int)VARSIZE_ANY_EXHDR(execution)),
            {id_text, (int)strlen(id_text)},
            chain_field_utf8(VARDATA_ANY(type), (int)VARSIZE_ANY_EXHDR(type)),
            {time_text, (int)strlen(time_text)},
            chain_field_utf8(json.data, json.len),
        };
        chain_hash(prev, prev_len, fields, 5, h);
        hash_null = false;
    }

    if (!null[COL_HASH] && !hash_null) {
        bytea *given = DatumGetByteaPP(v[COL_HASH]);
        if (VARSIZE_ANY_EXHDR(given) != SWF_CHAIN_HASH_BYTES ||
            memcmp(VARDATA_ANY(given), h, SWF_CHAIN_HASH_BYTES) != 0)
            ereport(ERROR, (errcode(SWF_CHAIN_ERRCODE),
                            errmsg("execution %s: event " INT64_FORMAT
                                   ": the hash given is not the chain's",
                                   TextDatumGetCString(v[COL_EXECUTION]), id),
                            errhint("leave the hash out: the database computes it")));
    }
    int attnum = shape->attnum[COL_HASH];
    Datum value = (Datum)0;
    if (!hash_null) {
        bytea *b = palloc(VARHDRSZ + SWF_CHAIN_HASH_BYTES);
        SET_VARSIZE(b, VARHDRSZ + SWF_CHAIN_HASH_BYTES);
        memcpy(VARDATA(b), h, SWF_CHAIN_HASH_BYTES);
        value = PointerGetDatum(b);
    }
    PG_RETURN_POINTER(heap_modify_tuple_by_cols(row, desc, 1, &attnum, &value, &hash_null));
}
