/* agui.wire._proto_fast: the optional compiled path of AG-UI's protobuf binding.
 *
 * frame_json(data, start, end): one ``ag_ui.Event`` message (``data[start:end]``) straight to
 * the JSON text of its event, the text the general path (upb parse, then
 * agui.wire._proto_convert.event_from_pb, then encode_json) gives for the same bytes, or None
 * when the frame is not laid out as the encoders write it (each field once, in field-number
 * order, one arm spanning the message), holds a value this reader leaves to the general path
 * (content parts, a run input, a non-finite number, a nested value deeper than MAX_DEPTH,
 * an unknown field or enum number, a duplicate object key) or is not well-formed: the caller
 * then takes the general path, which judges the frame as before. Never an error of its own.
 *
 * The per-message field tables come from the .proto descriptors (agui_pb_tables.h, written by
 * tools/codegen_proto_fast.py); this file is the table interpreter. Built by hatch_build.py
 * when a C compiler is there; a pure-Python install never needs it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum {
    K_STR = 1,  /* string, no presence: always there ("" when absent) */
    K_OSTR,     /* optional string */
    K_OI64,     /* optional int64 */
    K_OBOOL,    /* optional bool */
    K_TYPE,     /* BaseEvent.type (EventType) */
    K_OP,       /* JsonPatchOperation.op (JsonPatchOperationType): its name */
    K_VALUE,    /* google.protobuf.Value: there when set to a kind */
    K_STRUCT,   /* google.protobuf.Struct: there when present */
    K_MSG,      /* a message: there when present */
    K_RMSG,     /* repeated message: always there */
    K_RSTR,     /* repeated string: always there */
    K_BASE,     /* an arm's base_event */
    K_OTHER     /* a type not read here: its message is left to the general path */
};

enum {
    F_SLOW = 1,        /* present / non-empty: the general path reads the frame; else left out */
    F_OMIT_EMPTY = 2,  /* repeated: left out when empty */
    F_OUTCOME = 4,     /* the outcome string (H_OUTCOME) */
    F_OLIST = 8,       /* a list of the outcome's payload (H_OUTCOME), in ``rank`` order */
    F_INTERRUPTS = 16, /* the outcome list named "interrupts" */
    F_CONTENT = 32,    /* the content string (H_MESSAGE, H_TOOL_RESULT) */
    F_ROLE = 64        /* a message's role (H_MESSAGE) */
};

enum { H_NONE = 0, H_MESSAGE, H_TOOL_RESULT, H_OUTCOME };

typedef struct {
    uint32_t number;
    uint8_t kind;
    uint8_t flags;
    int16_t sub;  /* K_MSG / K_RMSG / K_BASE: index in MSGS */
    int16_t rank; /* F_OLIST: the list's place in the outcome payload */
    const char *key; /* the member's JSON key, quoted, with its colon */
    const char *attr; /* the field's name (the event struct's attribute) */
} Field;

typedef struct {
    const Field *fields;
    int n;
    int hook;
} Msg;

typedef struct {
    uint32_t number;   /* the envelope's field number */
    int msg;           /* index in MSGS */
    uint32_t type;     /* EventType number */
    const char *head;  /* {"type":"NAME" */
} Arm;

#include "agui_pb_tables.h" /* (MAX_FIELDS: the most fields of one message) */

#define N_MSGS ((int)(sizeof MSGS / sizeof MSGS[0]))

/* Whether ``sub`` (a field's) names a table: -1 for a message type the tables leave out (a
 * Value / Struct, a slow field's type), whose frames are the general path's. */
static inline int has_table(int sub) { return sub >= 0 && sub < N_MSGS; }

#ifndef SOURCE_DIGEST /* set by hatch_build.py: this file's and the tables' digest */
#define SOURCE_DIGEST ""
#endif

/* Message nesting levels read here (the envelope is level 1; a Struct in a Value one more, its
 * entries two, a list one and its items two): deeper, the general path, whose upb parse stops
 * at 100, so every frame read here is one upb parses. */
#define MAX_DEPTH 64

typedef struct {
    char *p;
    size_t n, cap;
    int failed; /* out of memory */
} Buf;

static int grow(Buf *b, size_t more) {
    size_t need = b->n + more, cap;
    char *p;
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap * 2 : 256;
    while (cap < need)
        cap *= 2;
    p = (char *)PyMem_Realloc(b->p, cap);
    if (p == NULL) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline int put(Buf *b, const char *s, size_t n) {
    if (grow(b, n) < 0)
        return -1;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

static inline int puts_(Buf *b, const char *s) { return put(b, s, strlen(s)); }

static inline int putc_(Buf *b, char c) {
    if (grow(b, 1) < 0)
        return -1;
    b->p[b->n++] = c;
    return 0;
}

/* A varint of at most ``max`` bytes at *pos (< end); -1 when cut, too long or (10 bytes) past
 * 64 bits. */
static inline int varint(const uint8_t *d, Py_ssize_t *pos, Py_ssize_t end, int max, uint64_t *out) {
    uint64_t v = 0;
    int shift = 0, i;
    for (i = 0; i < max; i++) {
        uint8_t byte;
        if (*pos >= end)
            return -1;
        byte = d[(*pos)++];
        v |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            if (i == 9 && byte > 1)
                return -1;
            if (max == 5 && i == 4 && byte > 0x0F)
                return -1;
            *out = v;
            return 0;
        }
        shift += 7;
    }
    return -1;
}

/* A length-delimited payload at *pos: [*a, *b), *pos past it. */
static inline int span(const uint8_t *d, Py_ssize_t *pos, Py_ssize_t end, Py_ssize_t *a, Py_ssize_t *b) {
    uint64_t len;
    if (varint(d, pos, end, 5, &len) < 0 || (uint64_t)(end - *pos) < len)
        return -1;
    *a = *pos;
    *pos += (Py_ssize_t)len;
    *b = *pos;
    return 0;
}

/* A JSON string of the UTF-8 bytes d[a:b], escaped as encode_json escapes; -1 when not
 * strict UTF-8 (overlong forms, surrogates and code points past U+10FFFF refused). */
static int put_string(Buf *out, const uint8_t *d, Py_ssize_t a, Py_ssize_t b) {
    static const char hex[] = "0123456789abcdef";
    Py_ssize_t i = a, run = a;
    if (grow(out, (size_t)(b - a) + 2) < 0)
        return -1;
    out->p[out->n++] = '"';
    while (i < b) {
        uint8_t c = d[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        if (c >= 0x80) {
            int len;
            uint32_t cp;
            if (c >= 0xC2 && c <= 0xDF)
                len = 2, cp = c & 0x1F;
            else if (c >= 0xE0 && c <= 0xEF)
                len = 3, cp = c & 0x0F;
            else if (c >= 0xF0 && c <= 0xF4)
                len = 4, cp = c & 0x07;
            else
                return -1;
            if (b - i < len)
                return -1;
            for (int k = 1; k < len; k++) {
                uint8_t cc = d[i + k];
                if ((cc & 0xC0) != 0x80)
                    return -1;
                cp = (cp << 6) | (cc & 0x3F);
            }
            if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
                (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
                return -1;
            i += len;
            continue;
        }
        if (put(out, (const char *)d + run, (size_t)(i - run)) < 0)
            return -1;
        switch (c) {
        case '"': if (put(out, "\\\"", 2) < 0) return -1; break;
        case '\\': if (put(out, "\\\\", 2) < 0) return -1; break;
        case '\b': if (put(out, "\\b", 2) < 0) return -1; break;
        case '\f': if (put(out, "\\f", 2) < 0) return -1; break;
        case '\n': if (put(out, "\\n", 2) < 0) return -1; break;
        case '\r': if (put(out, "\\r", 2) < 0) return -1; break;
        case '\t': if (put(out, "\\t", 2) < 0) return -1; break;
        default: {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            if (put(out, esc, 6) < 0)
                return -1;
        }
        }
        i++;
        run = i;
    }
    if (put(out, (const char *)d + run, (size_t)(i - run)) < 0 || putc_(out, '"') < 0)
        return -1;
    return 0;
}

static int put_int(Buf *out, long long v) {
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%lld", v);
    return put(out, tmp, (size_t)n);
}

/* A number_value as _num reads it: an integer when integral, at most 2**53 in magnitude and
 * not -0.0, else the double (shortest round trip, exponent as encode_json writes it). */
static int put_double(Buf *out, double v) {
    char *text, *e;
    int rc;
    if (!isfinite(v))
        return -1;
    if (v == floor(v) && fabs(v) <= 9007199254740992.0 && !(v == 0 && signbit(v)))
        return put_int(out, (long long)v);
    text = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (text == NULL) {
        PyErr_Clear();
        out->failed = 1;
        return -1;
    }
    e = strchr(text, 'e');
    if (e == NULL) {
        rc = puts_(out, text);
    } else {
        char *digits = e + 1;
        rc = put(out, text, (size_t)(e - text) + 1);
        if (rc == 0 && *digits == '-')
            rc = putc_(out, '-');
        if (*digits == '+' || *digits == '-')
            digits++;
        while (*digits == '0' && digits[1] != '\0')
            digits++;
        if (rc == 0)
            rc = puts_(out, digits);
    }
    PyMem_Free(text);
    return rc;
}

static int put_struct(Buf *out, const uint8_t *d, Py_ssize_t a, Py_ssize_t b, int depth);

/* The canonical bytes of a google.protobuf.Value, d[a:b], as JSON (no kind: null). */
static int put_value(Buf *out, const uint8_t *d, Py_ssize_t a, Py_ssize_t b, int depth) {
    Py_ssize_t pos = a, s, e;
    uint64_t v;
    uint8_t tag;
    if (depth > MAX_DEPTH)
        return -1;
    if (a == b)
        return put(out, "null", 4);
    tag = d[pos++];
    switch (tag) {
    case 0x08: /* null_value (any enum number) */
        if (varint(d, &pos, b, 10, &v) < 0 || pos != b)
            return -1;
        return put(out, "null", 4);
    case 0x20: /* bool_value */
        if (varint(d, &pos, b, 10, &v) < 0 || pos != b)
            return -1;
        return v ? put(out, "true", 4) : put(out, "false", 5);
    case 0x11: { /* number_value */
        double x;
#if !PY_LITTLE_ENDIAN
        return -1; /* the general path reads doubles on a big-endian host */
#endif
        if (b - pos != 8)
            return -1;
        memcpy(&x, d + pos, 8);
        return put_double(out, x);
    }
    case 0x1A: /* string_value */
        if (span(d, &pos, b, &s, &e) < 0 || pos != b)
            return -1;
        return put_string(out, d, s, e);
    case 0x2A: /* struct_value */
        if (span(d, &pos, b, &s, &e) < 0 || pos != b)
            return -1;
        return put_struct(out, d, s, e, depth + 1);  /* the Struct, a level down */
    case 0x32: { /* list_value: repeated Value values = 1 */
        Py_ssize_t lp;
        int first = 1;
        if (span(d, &pos, b, &s, &e) < 0 || pos != b)
            return -1;
        if (putc_(out, '[') < 0)
            return -1;
        lp = s;
        while (lp < e) {
            Py_ssize_t vs, ve;
            if (d[lp++] != 0x0A || span(d, &lp, e, &vs, &ve) < 0)
                return -1;
            if (!first && putc_(out, ',') < 0)
                return -1;
            first = 0;
            if (put_value(out, d, vs, ve, depth + 2) < 0)  /* ListValue, then Value */
                return -1;
        }
        return putc_(out, ']');
    }
    default:
        return -1;
    }
}

typedef struct {
    Py_ssize_t a, b;
} Key;

static int key_eq(const uint8_t *d, Key x, Key y) {
    return x.b - x.a == y.b - y.a && memcmp(d + x.a, d + y.a, (size_t)(x.b - x.a)) == 0;
}

static const uint8_t *SORT_DATA; /* the frame key_cmp reads (set under the GIL, see below) */

static int key_cmp(const void *x, const void *y) {
    const Key *p = (const Key *)x, *q = (const Key *)y;
    Py_ssize_t lp = p->b - p->a, lq = q->b - q->a;
    int c = memcmp(SORT_DATA + p->a, SORT_DATA + q->a, (size_t)(lp < lq ? lp : lq));
    return c ? c : (lp > lq) - (lp < lq);
}

/* Whether the ``n`` keys are all distinct (a duplicate: the general path reads the object).
 * Sorted, not hashed: a peer cannot make it slower than n log n comparisons. */
static int keys_distinct(const uint8_t *d, const Key *keys, Py_ssize_t n) {
    Key *sorted;
    int ok = 1;
    if (n <= 8) {
        for (Py_ssize_t i = 1; i < n; i++)
            for (Py_ssize_t j = 0; j < i; j++)
                if (key_eq(d, keys[i], keys[j]))
                    return 0;
        return 1;
    }
    sorted = (Key *)PyMem_Malloc((size_t)n * sizeof(Key));
    if (sorted == NULL)
        return -1;
    memcpy(sorted, keys, (size_t)n * sizeof(Key));
    SORT_DATA = d; /* the GIL is held and no Python code runs until qsort returns */
    qsort(sorted, (size_t)n, sizeof(Key), key_cmp);
    for (Py_ssize_t i = 1; i < n && ok; i++)
        if (key_eq(d, sorted[i - 1], sorted[i]))
            ok = 0;
    PyMem_Free(sorted);
    return ok;
}

/* The canonical bytes of an ordered google.protobuf.Struct, d[a:b], as a JSON object. */
static int put_struct(Buf *out, const uint8_t *d, Py_ssize_t a, Py_ssize_t b, int depth) {
    Key small[16], *keys = small;
    Py_ssize_t n = 0, cap = 16, pos = a;
    int rc = -1;
    if (depth > MAX_DEPTH)
        return -1;
    /* first pass: the entries' keys, checked distinct */
    while (pos < b) {
        Py_ssize_t es, ee, ep;
        Key k;
        if (d[pos++] != 0x0A || span(d, &pos, b, &es, &ee) < 0)
            goto done;
        ep = es;
        k.a = k.b = es;
        if (ep < ee && d[ep] == 0x0A) {
            ep++;
            if (span(d, &ep, ee, &k.a, &k.b) < 0)
                goto done;
        }
        if (n == cap) {
            Key *more;
            cap *= 4;
            if (keys == small) {
                more = (Key *)PyMem_Malloc((size_t)cap * sizeof(Key));
                if (more != NULL)
                    memcpy(more, small, sizeof small);
            } else {
                more = (Key *)PyMem_Realloc(keys, (size_t)cap * sizeof(Key));
            }
            if (more == NULL) {
                out->failed = 1;
                goto done;
            }
            keys = more;
        }
        keys[n++] = k;
    }
    {
        int distinct = keys_distinct(d, keys, n);
        if (distinct <= 0) {
            if (distinct < 0)
                out->failed = 1;
            goto done;
        }
    }
    if (putc_(out, '{') < 0)
        goto done;
    pos = a;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t es, ee, ep, vs, ve, ka, kb;
        pos++;
        span(d, &pos, b, &es, &ee); /* all read in the first pass */
        ep = es;
        if (ep < ee && d[ep] == 0x0A) {
            ep++;
            span(d, &ep, ee, &ka, &kb);
        }
        if (i && putc_(out, ',') < 0)
            goto done;
        if (put_string(out, d, keys[i].a, keys[i].b) < 0 || putc_(out, ':') < 0)
            goto done;
        if (ep == ee) {
            if (put(out, "null", 4) < 0)
                goto done;
        } else {
            if (d[ep++] != 0x12 || span(d, &ep, ee, &vs, &ve) < 0 || ep != ee)
                goto done;
            if (put_value(out, d, vs, ve, depth + 2) < 0)  /* FieldsEntry, then Value */
                goto done;
        }
    }
    rc = putc_(out, '}');
done:
    if (keys != small)
        PyMem_Free(keys);
    return rc;
}

typedef struct {
    Py_ssize_t a, b; /* payload (LEN), or the run of a repeated field's entries */
    uint64_t v;      /* varint */
    int count;       /* occurrences (0: absent) */
} Slot;

/* The fields of message ``m`` in d[a:b] into ``slots``; -1 unless canonical. */
static int parse_fields(const Msg *m, const uint8_t *d, Py_ssize_t a, Py_ssize_t b, Slot *slots) {
    Py_ssize_t pos = a;
    int next = 0, last = -1;
    memset(slots, 0, sizeof(Slot) * (size_t)m->n);
    while (pos < b) {
        Py_ssize_t at = pos;
        uint64_t tag;
        uint32_t number, wire;
        int j;
        const Field *f;
        if (varint(d, &pos, b, 5, &tag) < 0)
            return -1;
        number = (uint32_t)(tag >> 3);
        wire = (uint32_t)(tag & 7);
        if (last >= 0 && m->fields[last].number == number &&
            (m->fields[last].kind == K_RMSG || m->fields[last].kind == K_RSTR)) {
            j = last; /* the next entry of a repeated field's run */
        } else {
            for (j = next; j < m->n && m->fields[j].number != number; j++)
                ;
            if (j == m->n)
                return -1; /* unknown, repeated out of place, or out of order */
            next = j + 1;
            last = j;
            slots[j].a = at;
        }
        f = &m->fields[j];
        slots[j].count++;
        switch (f->kind) {
        case K_OI64:
        case K_OBOOL:
        case K_TYPE:
        case K_OP:
            if (wire != 0 || varint(d, &pos, b, 10, &slots[j].v) < 0)
                return -1;
            break;
        case K_RMSG:
        case K_RSTR: {
            Py_ssize_t s, e;
            if (wire != 2 || span(d, &pos, b, &s, &e) < 0)
                return -1;
            slots[j].b = pos;
            break;
        }
        default:
            if (wire != 2 || span(d, &pos, b, &slots[j].a, &slots[j].b) < 0)
                return -1;
        }
    }
    return 0;
}

static int put_message(Buf *out, int index, const uint8_t *d, Py_ssize_t a, Py_ssize_t b, int depth);

/* The JSON of field ``f`` (present, or always there) after ``sep`` (',' or none). */
static int put_field(Buf *out, const Field *f, const Slot *s, const uint8_t *d, int depth, int *first) {
    int absent = s->count == 0;
    if (f->kind == K_OTHER)
        return -1; /* present or at its default: either way the general path's to write */
    if (f->flags & F_SLOW)
        return absent ? 0 : -1;
    if (f->kind == K_VALUE && !absent && s->a == s->b)
        absent = 1; /* a Value of no kind is left out */
    if (absent && f->kind != K_STR && f->kind != K_OP && f->kind != K_RMSG && f->kind != K_RSTR)
        return 0;
    if (absent && (f->flags & F_OMIT_EMPTY))
        return 0;
    if (!*first && putc_(out, ',') < 0)
        return -1;
    *first = 0;
    if (puts_(out, f->key) < 0)
        return -1;
    switch (f->kind) {
    case K_STR:
        if (absent)
            return put(out, "\"\"", 2);
        return put_string(out, d, s->a, s->b);
    case K_OSTR:
        return put_string(out, d, s->a, s->b);
    case K_OI64:
        return put_int(out, (long long)s->v);
    case K_OBOOL:
        return s->v ? put(out, "true", 4) : put(out, "false", 5);
    case K_OP: /* no presence: absent is 0 */
        if (s->v >= sizeof OP_NAMES / sizeof OP_NAMES[0])
            return -1; /* an op number the enum lacks: the general path */
        return puts_(out, OP_NAMES[s->v]);
    case K_VALUE:
        return put_value(out, d, s->a, s->b, depth + 1);
    case K_STRUCT:
        return put_struct(out, d, s->a, s->b, depth + 1);
    case K_MSG:
        return put_message(out, f->sub, d, s->a, s->b, depth + 1);
    case K_RMSG:
    case K_RSTR: {
        Py_ssize_t pos = s->a;
        int i;
        if (putc_(out, '[') < 0)
            return -1;
        for (i = 0; i < s->count; i++) {
            Py_ssize_t ea, eb;
            uint64_t tag;
            varint(d, &pos, s->b, 5, &tag);
            span(d, &pos, s->b, &ea, &eb);
            if (i && putc_(out, ',') < 0)
                return -1;
            if (f->kind == K_RSTR ? put_string(out, d, ea, eb) < 0
                                  : put_message(out, f->sub, d, ea, eb, depth + 1) < 0)
                return -1;
        }
        return putc_(out, ']');
    }
    default:
        return -1;
    }
}

static int slot_is(const Slot *s, const uint8_t *d, const char *text) {
    size_t n = strlen(text);
    return s->count && (size_t)(s->b - s->a) == n && memcmp(d + s->a, text, n) == 0;
}

/* The fields of message ``m`` (``slots`` parsed) past ``first``, then its hook's members. */
static int put_fields(Buf *out, const Msg *m, const Slot *slots, const uint8_t *d, int depth, int first) {
    int outcome = -1, content = -1, role = -1;
    for (int i = 0; i < m->n; i++) {
        const Field *f = &m->fields[i];
        if (f->kind == K_BASE)
            continue;
        if (f->flags & F_OUTCOME) {
            outcome = i;
            continue;
        }
        if (f->flags & F_OLIST)
            continue;
        if (f->flags & F_CONTENT)
            content = i;
        if (f->flags & F_ROLE)
            role = i;
        if (put_field(out, f, &slots[i], d, depth, &first) < 0)
            return -1;
    }
    switch (m->hook) {
    case H_MESSAGE: /* message_from_wire: a user / tool message without content has [] */
        if (content >= 0 && slots[content].count == 0 && role >= 0 &&
            (slot_is(&slots[role], d, "user") || slot_is(&slots[role], d, "tool")))
            return puts_(out, ",\"content\":[]");
        return 0;
    case H_TOOL_RESULT: /* _tool_result_from_pb: no content is the (empty) parts */
        if (content >= 0 && slots[content].count == 0)
            return puts_(out, ",\"content\":[]");
        return 0;
    case H_OUTCOME: { /* _outcome_from_pb */
        int nested = outcome >= 0 && slots[outcome].count && slots[outcome].b > slots[outcome].a;
        int interrupts = 0, one = 1;
        if (nested) {
            if (puts_(out, ",\"outcome\":{\"type\":") < 0 ||
                put_string(out, d, slots[outcome].a, slots[outcome].b) < 0)
                return -1;
            one = 0;
        }
        for (int rank = 0; rank < m->n; rank++) {
            for (int i = 0; i < m->n; i++) {
                const Field *f = &m->fields[i];
                if (!(f->flags & F_OLIST) || f->rank != rank || slots[i].count == 0)
                    continue;
                if (f->flags & F_INTERRUPTS)
                    interrupts = 1;
                if (nested) {
                    if (put_field(out, f, &slots[i], d, depth + 1, &one) < 0)
                        return -1;
                } else if (put_field(out, f, &slots[i], d, depth, &first) < 0) {
                    return -1;
                }
            }
        }
        if (nested) {
            if (!interrupts && slot_is(&slots[outcome], d, "interrupt") &&
                puts_(out, ",\"interrupts\":[]") < 0)
                return -1;
            return putc_(out, '}');
        }
        return 0;
    }
    default:
        return 0;
    }
}

static int put_message(Buf *out, int index, const uint8_t *d, Py_ssize_t a, Py_ssize_t b, int depth) {
    const Msg *m;
    Slot slots[MAX_FIELDS];
    if (!has_table(index))
        return -1; /* no table for its type: the general path's */
    m = &MSGS[index];
    if (depth > MAX_DEPTH || parse_fields(m, d, a, b, slots) < 0)
        return -1;
    if (putc_(out, '{') < 0 || put_fields(out, m, slots, d, depth, 1) < 0)
        return -1;
    return putc_(out, '}');
}

/* The event JSON of the Event message d[a:b]; -1: the general path. */
static int put_event(Buf *out, const uint8_t *d, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t pos = a, s, e;
    uint64_t tag;
    const Arm *arm = NULL;
    const Msg *m;
    Slot slots[MAX_FIELDS], base[MAX_FIELDS];
    int bi = -1;
    if (varint(d, &pos, b, 5, &tag) < 0 || (tag & 7) != 2)
        return -1;
    for (size_t i = 0; i < sizeof ARMS / sizeof ARMS[0]; i++)
        if (ARMS[i].number == (uint32_t)(tag >> 3)) {
            arm = &ARMS[i];
            break;
        }
    if (arm == NULL || span(d, &pos, b, &s, &e) < 0 || pos != b)
        return -1;
    m = &MSGS[arm->msg];
    if (parse_fields(m, d, s, e, slots) < 0)
        return -1;
    for (int i = 0; i < m->n; i++)
        if (m->fields[i].kind == K_BASE)
            bi = i;
    if (bi < 0 || slots[bi].count == 0 || !has_table(m->fields[bi].sub))
        return -1; /* no base_event: the general path's error */
    {
        const Msg *bm = &MSGS[m->fields[bi].sub];
        int first = 0;
        if (parse_fields(bm, d, slots[bi].a, slots[bi].b, base) < 0)
            return -1;
        if (puts_(out, arm->head) < 0)
            return -1;
        for (int i = 0; i < bm->n; i++) {
            if (bm->fields[i].kind == K_TYPE) {
                if (base[i].v != arm->type)
                    return -1; /* disagrees with the arm: the general path's error */
                continue;
            }
            if (put_field(out, &bm->fields[i], &base[i], d, 3, &first) < 0)  /* base_event */
                return -1;
        }
        if (put_fields(out, m, slots, d, 2, 0) < 0)  /* the arm: level 2 */
            return -1;
    }
    return putc_(out, '}');
}

static PyObject *frame_json(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    Py_ssize_t start, end;
    Buf out = {NULL, 0, 0, 0};
    PyObject *result;
    int rc;
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "frame_json(data, start, end)");
        return NULL;
    }
    start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    end = PyLong_AsSsize_t(args[2]);
    if (end == -1 && PyErr_Occurred())
        return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (start < 0 || end > view.len || start > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "frame_json: start/end outside the data");
        return NULL;
    }
    rc = put_event(&out, (const uint8_t *)view.buf, start, end);
    PyBuffer_Release(&view);
    if (out.failed) {
        PyMem_Free(out.p);
        return PyErr_NoMemory();
    }
    if (rc < 0) {
        PyMem_Free(out.p);
        Py_RETURN_NONE;
    }
    result = PyBytes_FromStringAndSize(out.p, (Py_ssize_t)out.n);
    PyMem_Free(out.p);
    return result;
}


/* ------------------------------------------------------------------ encode
 *
 * write_frame(event, arm): the frame (4-byte big-endian length + Event bytes) of an event struct
 * whose arm's members are all strings and JSON values (ARMS[arm]), byte for byte what the
 * generated Python writer (agui_pb_convert.w_<arm>) gives, or None when that writer would not
 * give bytes or this one leaves the event to it (a timestamp, rawEvent or metadata; a member
 * that is not exactly a str, dict, list, tuple, int, float, bool or None; a string that is not
 * UTF-8-encodable; an int past a double; nesting past VALUE_DEPTH): the Python paths then
 * encode it as before. value_bytes(value): the canonical google.protobuf.Value bytes of a
 * JSON value (agui.wire._proto_typed.value_bytes), or None where that function must judge it.
 */

#define VALUE_DEPTH 200

static PyObject *UNSET_OBJ = NULL;

static inline int put_varint(Buf *b, uint64_t v) {
    if (grow(b, 10) < 0)
        return -1;
    while (v >= 0x80) {
        b->p[b->n++] = (char)((v & 0x7F) | 0x80);
        v >>= 7;
    }
    b->p[b->n++] = (char)v;
    return 0;
}

/* Close a length-delimited field whose one-byte length slot is at ``at`` (content after it). */
static int close_len(Buf *b, size_t at) {
    size_t len = b->n - at - 1;
    uint8_t tmp[10];
    int k = 0;
    uint64_t v = len;
    while (v >= 0x80) {
        tmp[k++] = (uint8_t)((v & 0x7F) | 0x80);
        v >>= 7;
    }
    tmp[k++] = (uint8_t)v;
    if (k > 1) {
        if (grow(b, (size_t)k - 1) < 0)
            return -1;
        memmove(b->p + at + k, b->p + at + 1, len);
        b->n += (size_t)k - 1;
    }
    memcpy(b->p + at, tmp, (size_t)k);
    return 0;
}

/* Open a length-delimited field: its tag (``tag``: field number << 3 | 2, a varint of as many
 * bytes as the number needs) and a one-byte length slot at *at (see close_len). */
static inline int open_len(Buf *b, uint32_t tag, size_t *at) {
    if (put_varint(b, tag) < 0 || grow(b, 1) < 0)
        return -1;
    *at = b->n;
    b->p[b->n++] = 0;
    return 0;
}

/* UTF-8 of a str, or NULL (error cleared) when it has none (a lone surrogate). */
static const char *utf8_of(PyObject *text, Py_ssize_t *size) {
    const char *data = PyUnicode_AsUTF8AndSize(text, size);
    if (data == NULL)
        PyErr_Clear();
    return data;
}

static int put_str_field(Buf *b, uint32_t tag, PyObject *text) {
    Py_ssize_t size;
    const char *data = utf8_of(text, &size);
    if (data == NULL || put_varint(b, tag) < 0)
        return -1;
    if (put_varint(b, (uint64_t)size) < 0)
        return -1;
    return put(b, data, (size_t)size);
}

static int write_value(Buf *b, PyObject *v, int depth);

static int write_object(Buf *b, PyObject *dict, int depth) {
    Py_ssize_t i = 0;
    PyObject *key, *item;
    while (PyDict_Next(dict, &i, &key, &item)) {
        size_t entry, value;
        Py_ssize_t size;
        if (!PyUnicode_CheckExact(key))
            return -1;
        if (open_len(b, 0x0A, &entry) < 0)
            return -1;
        if (PyUnicode_GET_LENGTH(key) && put_str_field(b, 0x0A, key) < 0)
            return -1;
        (void)size;
        if (open_len(b, 0x12, &value) < 0 || write_value(b, item, depth + 1) < 0 ||
            close_len(b, value) < 0 || close_len(b, entry) < 0)
            return -1;
    }
    return 0;
}

/* The canonical Value bytes of ``v`` (see value_bytes); -1: leave it to Python. */
static int write_value(Buf *b, PyObject *v, int depth) {
    if (depth > VALUE_DEPTH)
        return -1;
    if (PyUnicode_CheckExact(v))
        return put_str_field(b, 0x1A, v);
    if (v == Py_None)
        return put(b, "\x08\x00", 2);
    if (v == Py_True)
        return put(b, "\x20\x01", 2);
    if (v == Py_False)
        return put(b, "\x20\x00", 2);
    if (PyLong_CheckExact(v) || PyFloat_CheckExact(v)) {
        double x = PyFloat_CheckExact(v) ? PyFloat_AS_DOUBLE(v) : PyLong_AsDouble(v);
        unsigned char raw[8];
        if (x == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (PyFloat_Pack8(x, (char *)raw, 1) < 0) {
            PyErr_Clear();
            return -1;
        }
        if (grow(b, 9) < 0)
            return -1;
        b->p[b->n++] = 0x11;
        memcpy(b->p + b->n, raw, 8);
        b->n += 8;
        return 0;
    }
    if (PyDict_CheckExact(v)) {
        size_t at;
        if (open_len(b, 0x2A, &at) < 0 || write_object(b, v, depth) < 0)
            return -1;
        return close_len(b, at);
    }
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
        size_t at;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        if (open_len(b, 0x32, &at) < 0)
            return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t item;
            /* a list may change under us only through a __del__ run by nothing here */
            if (i >= PySequence_Fast_GET_SIZE(v))
                return -1;
            if (open_len(b, 0x0A, &item) < 0 ||
                write_value(b, PySequence_Fast_GET_ITEM(v, i), depth + 1) < 0 ||
                close_len(b, item) < 0)
                return -1;
        }
        return close_len(b, at);
    }
    return -1;
}

static PyObject *value_bytes(PyObject *self, PyObject *value) {
    Buf out = {NULL, 0, 0, 0};
    PyObject *result;
    (void)self;
    if (write_value(&out, value, 0) < 0) {
        PyMem_Free(out.p);
        if (out.failed)
            return PyErr_NoMemory();
        Py_RETURN_NONE;
    }
    result = PyBytes_FromStringAndSize(out.p, (Py_ssize_t)out.n);
    PyMem_Free(out.p);
    return result;
}

/* Each message's field names (interned): the attributes write_frame reads, by MSGS index. */
static PyObject *ATTRS[sizeof MSGS / sizeof MSGS[0]][MAX_FIELDS];

/* Whether the arm's members are all strings and JSON values (a writable arm). */
static int writable(const Msg *m) {
    for (int i = 0; i < m->n; i++) {
        int k = m->fields[i].kind;
        if (k != K_BASE && k != K_STR && k != K_OSTR && k != K_VALUE)
            return 0;
    }
    return 1;
}

/* An arm's base_event (field ``f``): its type alone (left out when 0), as the tables number
 * them; -1 (the Python writers) unless every other BaseEvent member the tables list is unset. */
static int write_base(Buf *b, PyObject *ev, const Field *f, uint32_t type) {
    const Msg *bm;
    uint32_t type_number = 0;
    size_t at;
    if (!has_table(f->sub))
        return -1;
    bm = &MSGS[f->sub];
    for (int i = 0; i < bm->n; i++) {
        PyObject *v;
        int unset;
        if (bm->fields[i].kind == K_TYPE) {
            type_number = bm->fields[i].number;
            continue;
        }
        v = PyObject_GetAttr(ev, ATTRS[f->sub][i]);
        if (v == NULL) {
            PyErr_Clear();
            return -1;
        }
        unset = v == UNSET_OBJ;
        Py_DECREF(v);
        if (!unset)
            return -1;
    }
    if (type_number == 0 || open_len(b, f->number << 3 | 2, &at) < 0)
        return -1;
    if (type && (put_varint(b, (uint64_t)type_number << 3) < 0 || put_varint(b, type) < 0))
        return -1;
    return close_len(b, at);
}

static int write_arm(Buf *b, PyObject *ev, Py_ssize_t index) {
    const Arm *arm = &ARMS[index];
    const Msg *m = &MSGS[arm->msg];
    size_t body;
    if (grow(b, 4) < 0)
        return -1;
    b->n += 4; /* the frame's length, below */
    if (open_len(b, arm->number << 3 | 2, &body) < 0)
        return -1;
    for (int i = 0; i < m->n; i++) { /* in field-number order, as the tables list them */
        const Field *f = &m->fields[i];
        PyObject *v;
        int rc = 0;
        if (f->kind == K_BASE) {
            if (write_base(b, ev, f, arm->type) < 0)
                return -1;
            continue;
        }
        v = PyObject_GetAttr(ev, ATTRS[arm->msg][i]);
        if (v == NULL) {
            PyErr_Clear();
            return -1;
        }
        if (v != UNSET_OBJ || f->kind == K_STR) {
            uint32_t tag = f->number << 3 | 2;
            if (f->kind == K_VALUE) {
                size_t at;
                rc = open_len(b, tag, &at) < 0 || write_value(b, v, 0) < 0 || close_len(b, at) < 0
                         ? -1
                         : 0;
            } else if (!PyUnicode_CheckExact(v)) {
                rc = -1;
            } else if (f->kind == K_OSTR || PyUnicode_GET_LENGTH(v)) {
                rc = put_str_field(b, tag, v);
            }
        }
        Py_DECREF(v);
        if (rc < 0)
            return -1;
    }
    if (close_len(b, body) < 0)
        return -1;
    {
        size_t len = b->n - 4;
        if (len > 0xFFFFFFFFu)
            return -1;
        b->p[0] = (char)(len >> 24);
        b->p[1] = (char)(len >> 16);
        b->p[2] = (char)(len >> 8);
        b->p[3] = (char)len;
    }
    return 0;
}

static PyObject *write_frame(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Buf out = {NULL, 0, 0, 0};
    Py_ssize_t index;
    PyObject *result;
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "write_frame(event, arm)");
        return NULL;
    }
    index = PyLong_AsSsize_t(args[1]);
    if (index == -1 && PyErr_Occurred())
        return NULL;
    if (index < 0 || (size_t)index >= sizeof ARMS / sizeof ARMS[0] || !writable(&MSGS[ARMS[index].msg])) {
        PyErr_SetString(PyExc_ValueError, "write_frame: not a writable arm");
        return NULL;
    }
    if (write_arm(&out, args[0], index) < 0) {
        PyMem_Free(out.p);
        if (out.failed)
            return PyErr_NoMemory();
        Py_RETURN_NONE;
    }
    result = PyBytes_FromStringAndSize(out.p, (Py_ssize_t)out.n);
    PyMem_Free(out.p);
    return result;
}

/* (type name, writable) of each arm, by index: what write_frame's ``arm`` counts. */
static PyObject *arm_list(void) {
    size_t n = sizeof ARMS / sizeof ARMS[0];
    PyObject *out = PyTuple_New((Py_ssize_t)n);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *head = ARMS[i].head + 9; /* past {"type":" */
        PyObject *row = Py_BuildValue("(s#O)", head, (Py_ssize_t)strlen(head) - 1,
                                      writable(&MSGS[ARMS[i].msg]) ? Py_True : Py_False);
        if (row == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, (Py_ssize_t)i, row);
    }
    return out;
}

static int setup_encode(PyObject *module) {
    PyObject *msgspec = PyImport_ImportModule("msgspec"), *arms;
    if (msgspec == NULL)
        return -1;
    UNSET_OBJ = PyObject_GetAttrString(msgspec, "UNSET");
    Py_DECREF(msgspec);
    if (UNSET_OBJ == NULL)
        return -1;
    for (size_t k = 0; k < sizeof MSGS / sizeof MSGS[0]; k++)
        for (int i = 0; i < MSGS[k].n; i++)
            if ((ATTRS[k][i] = PyUnicode_InternFromString(MSGS[k].fields[i].attr)) == NULL)
                return -1;
    arms = arm_list();
    if (arms == NULL || PyModule_AddObject(module, "ARMS", arms) < 0) {
        Py_XDECREF(arms);
        return -1;
    }
    return 0;
}

/* frames_json(data, pos, max_frame): frame_json over the frames of ``data`` from ``pos`` (each
 * a 4-byte big-endian length and that many bytes), up to the first one that is incomplete,
 * over ``max_frame`` or left to the general path; (their JSON texts, the position of that
 * first frame). */
static PyObject *frames_json(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    Py_ssize_t pos, limit;
    Buf out = {NULL, 0, 0, 0};
    PyObject *list, *result = NULL;
    const uint8_t *d;
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "frames_json(data, pos, max_frame)");
        return NULL;
    }
    pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred())
        return NULL;
    limit = PyLong_AsSsize_t(args[2]);
    if (limit == -1 && PyErr_Occurred())
        return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (pos < 0 || pos > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "frames_json: pos outside the data");
        return NULL;
    }
    list = PyList_New(0);
    if (list == NULL)
        goto done;
    d = (const uint8_t *)view.buf;
    while (view.len - pos >= 4) {
        Py_ssize_t size = (Py_ssize_t)((uint32_t)d[pos] << 24 | (uint32_t)d[pos + 1] << 16 |
                                       (uint32_t)d[pos + 2] << 8 | d[pos + 3]);
        PyObject *text;
        int rc;
        if (size > limit || view.len - pos - 4 < size)
            break;
        out.n = 0;
        rc = put_event(&out, d, pos + 4, pos + 4 + size);
        if (out.failed) {
            Py_CLEAR(list);
            PyErr_NoMemory();
            goto done;
        }
        if (rc < 0)
            break;
        text = PyBytes_FromStringAndSize(out.p, (Py_ssize_t)out.n);
        if (text == NULL || PyList_Append(list, text) < 0) {
            Py_XDECREF(text);
            Py_CLEAR(list);
            goto done;
        }
        Py_DECREF(text);
        pos += 4 + size;
    }
    result = Py_BuildValue("(Nn)", list, pos);
done:
    PyMem_Free(out.p);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"frames_json", (PyCFunction)(void (*)(void))frames_json, METH_FASTCALL,
     "frames_json(data, pos, max_frame) -> (list[bytes], int): frame_json over the frames "
     "from pos up to the first one it does not read, and that frame's position."},
    {"frame_json", (PyCFunction)(void (*)(void))frame_json, METH_FASTCALL,
     "frame_json(data, start, end) -> bytes | None: the event JSON of the Event message "
     "data[start:end], or None when the general path must read it."},
    {"write_frame", (PyCFunction)(void (*)(void))write_frame, METH_FASTCALL,
     "write_frame(event, arm) -> bytes | None: the frame of an event of a writable arm, or "
     "None when the Python writers must encode it."},
    {"value_bytes", (PyCFunction)value_bytes, METH_O,
     "value_bytes(value) -> bytes | None: the canonical google.protobuf.Value bytes of a JSON "
     "value, or None when agui.wire._proto_typed.value_bytes must judge it."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "agui.wire._proto_fast",
                                    "The compiled path of the protobuf binding (optional).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__proto_fast(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && (PyModule_AddStringConstant(m, "TABLES", TABLES_DIGEST) < 0 ||
                      PyModule_AddStringConstant(m, "SOURCE", SOURCE_DIGEST) < 0 ||
                      setup_encode(m) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
