/*
 * gc_class.c - classes and their compiled reference schemas (UE UClass + ReferenceSchema).
 *
 * A class is itself an object, of the metaclass "Class", whose payload is the gc_class; an
 * instance keeps its class alive through an immutable reference, and a class keeps its super.
 * Registration validates every member against the instance size and compiles one flat,
 * END-terminated op list: the super's ops first, then the class's own members, then its
 * class-level add_referenced_objects. Marking runs that list and nothing else.
 */
#include "gc_internal.h"

#include <stdlib.h>
#include <string.h>

static void class_report_super(void *payload, gc_collector *c)
{
    gc_class *cls = payload;
    if (cls->super)
        gc_collector_add_immutable(c, cls->super);
}

static void class_destructor(void *payload)
{
    gc_class *cls = payload;
    if (cls->mark_schema != cls->schema)
        free(cls->mark_schema);
    for (uint32_t i = 0; i < cls->inner_count; i++)
        free(cls->inner_schemas[i]);
    free(cls->inner_schemas);
    free(cls->schema);
    free(cls->name);
}

static const gc_schema_op class_schema[] = {
    { GC_OP_OBJECT_ARO, 0, 0, NULL, class_report_super, "super" },
    { GC_OP_END, 0, 0, NULL, NULL, NULL },
};

static gc_result class_id_alloc(gc_heap *heap, uint32_t *out_id)
{
    for (uint32_t id = 0; id < heap->class_count; id++) {
        if (!heap->classes[id]) {
            *out_id = id;
            return GC_OK;
        }
    }
    if (heap->class_count >= heap->max_classes)
        return GC_E_LIMIT;
    *out_id = heap->class_count++;
    return GC_OK;
}

void gc_class_release(gc_heap *heap, gc_class *cls)
{
    if (heap->classes[cls->id] == cls)
        heap->classes[cls->id] = NULL;
}

/* The metaclass describes itself: its object's class id is its own id (0). */
gc_result gc_class_bootstrap(gc_heap *heap)
{
    uint32_t id;
    gc_result r = class_id_alloc(heap, &id);
    if (r != GC_OK)
        return r;
    gc_header *h;
    r = gc_array_alloc(heap, sizeof(gc_class), &h);
    if (r != GC_OK)
        return r;
    gc_class *meta = gc_payload(h);
    meta->name = gc_strdup("Class");
    meta->schema = gc_malloc(sizeof class_schema);
    if (!meta->name || !meta->schema) {
        free(meta->name);
        free(meta->schema);
        gc_array_free(heap, h, sizeof(gc_class));
        return GC_E_NOMEM;
    }
    memcpy(meta->schema, class_schema, sizeof class_schema);
    meta->schema_len = 1;
    meta->mark_schema = meta->schema;
    meta->size = sizeof(gc_class);
    meta->id = id;
    meta->hooks.destructor = class_destructor;
    heap->classes[id] = meta;
    heap->class_class = meta;
    h->class_id = id;
    h->outer_index = GC_INDEX_NONE;
    atomic_init(&h->flags, GC_F_PERMANENT | GC_F_IS_CLASS);
    gc_mark_born(heap, h);
    gc_special_sync(heap, h);
    heap->permanent_count++;
    return GC_OK;
}

/* ---- schema compilation ------------------------------------------------------------- */

typedef struct schema_builder {
    gc_schema_op *ops;
    uint32_t count, capacity;
    gc_schema_op **inners;     /* inner op lists allocated for this class */
    uint32_t inner_count, inner_capacity;
} schema_builder;

static gc_result builder_push(schema_builder *b, gc_schema_op op)
{
    if (b->count == b->capacity) {
        gc_schema_op *ops = gc_grow(b->ops, sizeof *ops, &b->capacity, 8);
        if (!ops)
            return GC_E_NOMEM;
        b->ops = ops;
    }
    b->ops[b->count++] = op;
    return GC_OK;
}

static gc_result builder_keep_inner(schema_builder *b, gc_schema_op *inner)
{
    if (b->inner_count == b->inner_capacity) {
        gc_schema_op **v = gc_grow(b->inners, sizeof *v, &b->inner_capacity, 4);
        if (!v)
            return GC_E_NOMEM;
        b->inners = v;
    }
    b->inners[b->inner_count++] = inner;
    return GC_OK;
}

static void builder_free(schema_builder *b)
{
    for (uint32_t i = 0; i < b->inner_count; i++)
        free(b->inners[i]);
    free(b->inners);
    free(b->ops);
}

static gc_result compile_members(schema_builder *owner, schema_builder *b,
                                 const gc_member *members, size_t extent, int depth);

/* Checks one member against the extent it lives in and appends its op. */
static gc_result compile_member(schema_builder *owner, schema_builder *b, const gc_member *m,
                                size_t extent, int depth)
{
    size_t need;
    gc_schema_op op = { 0, 0, 0, NULL, NULL, m->name };
    if (m->offset % sizeof(void *) != 0 || m->offset > UINT32_MAX)
        return GC_E_SCHEMA;
    op.offset = (uint32_t)m->offset;
    switch (m->kind) {
    case GC_MEMBER_REF:
        op.kind = GC_OP_REF;
        need = sizeof(void *);
        break;
    case GC_MEMBER_REF_ARRAY:
        op.kind = GC_OP_REF_ARRAY;
        need = sizeof(gc_ref_array);
        break;
    case GC_MEMBER_STRUCT_ARO:
        if (!m->add_refs || m->size == 0)
            return GC_E_SCHEMA;
        op.kind = GC_OP_STRUCT_ARO;
        op.fn = m->add_refs;
        need = m->size;
        break;
    case GC_MEMBER_STRUCT_ARRAY: {
        if (!m->inner || m->stride == 0 || m->stride > UINT32_MAX || depth > 8)
            return GC_E_SCHEMA;
        op.kind = GC_OP_STRUCT_ARRAY;
        op.stride = (uint32_t)m->stride;
        need = sizeof(gc_struct_array);
        schema_builder inner = { 0 };
        gc_result r = compile_members(owner, &inner, m->inner, m->stride, depth + 1);
        if (r == GC_OK)
            r = builder_push(&inner, (gc_schema_op){ GC_OP_END, 0, 0, NULL, NULL, NULL });
        if (r == GC_OK)
            r = builder_keep_inner(owner, inner.ops);
        if (r != GC_OK) {
            free(inner.ops);
            return r;
        }
        op.inner = inner.ops;
        break;
    }
    default:
        return GC_E_SCHEMA;
    }
    if (need > extent || m->offset > extent - need)
        return GC_E_SCHEMA;
    return builder_push(b, op);
}

static gc_result compile_members(schema_builder *owner, schema_builder *b,
                                 const gc_member *members, size_t extent, int depth)
{
    if (!members)
        return GC_OK;
    for (const gc_member *m = members; m->kind != GC_MEMBER_END; m++) {
        gc_result r = compile_member(owner, b, m, extent, depth);
        if (r != GC_OK)
            return r;
    }
    return GC_OK;
}

static gc_result compile_schema(const gc_class_desc *desc, schema_builder *b)
{
    const gc_class *super = desc->super;
    if (super) {
        for (uint32_t i = 0; i < super->schema_len; i++) {
            gc_result r = builder_push(b, super->schema[i]);
            if (r != GC_OK)
                return r;
        }
    }
    gc_result r = compile_members(b, b, desc->members, desc->size, 0);
    if (r == GC_OK && desc->add_referenced_objects)
        r = builder_push(b, (gc_schema_op){ GC_OP_OBJECT_ARO, 0, 0, NULL,
                                            desc->add_referenced_objects,
                                            "add_referenced_objects" });
    if (r == GC_OK)
        r = builder_push(b, (gc_schema_op){ GC_OP_END, 0, 0, NULL, NULL, NULL });
    return r;
}

/* Marking's copy of a schema: runs of REFs at consecutive offsets become one REF_RUN, so the
 * common case (an object with a few reference members side by side) is one tight loop. */
static gc_schema_op *merge_ref_runs(const gc_schema_op *schema, uint32_t len)
{
    gc_schema_op *out = gc_malloc(((size_t)len + 1) * sizeof *out);
    if (!out)
        return NULL;
    uint32_t n = 0;
    for (uint32_t i = 0; i < len; i++) {
        gc_schema_op op = schema[i];
        if (op.kind == GC_OP_REF && n > 0) {
            gc_schema_op *prev = &out[n - 1];
            uint32_t prev_count = prev->kind == GC_OP_REF_RUN ? prev->stride
                                : prev->kind == GC_OP_REF ? 1 : 0;
            if (prev_count && prev->offset + prev_count * sizeof(void *) == op.offset) {
                prev->kind = GC_OP_REF_RUN;
                prev->stride = prev_count + 1;
                continue;
            }
        }
        out[n++] = op;
    }
    out[n] = schema[len]; /* END */
    return out;
}

static gc_class_hooks inherit_hooks(const gc_class_hooks *own, const gc_class *super)
{
    gc_class_hooks h = *own;
    if (super) {
        if (!h.begin_destroy)
            h.begin_destroy = super->hooks.begin_destroy;
        if (!h.is_ready_for_finish_destroy)
            h.is_ready_for_finish_destroy = super->hooks.is_ready_for_finish_destroy;
        if (!h.finish_destroy)
            h.finish_destroy = super->hooks.finish_destroy;
        if (!h.destructor)
            h.destructor = super->hooks.destructor;
    }
    return h;
}

gc_result gc_class_register(gc_heap *heap, const gc_class_desc *desc, gc_class **out_class)
{
    if (!heap || !desc || !out_class || !desc->name)
        return GC_E_NULL;
    if (desc->name[0] == '\0' || strchr(desc->name, '.'))
        return GC_E_INVALID;
    if (desc->size == 0 || (desc->super && desc->size < desc->super->size))
        return GC_E_SCHEMA;
    if (gc_class_find(heap, desc->name))
        return GC_E_EXISTS;
    if (desc->super && !gc_object_is_valid(desc->super))
        return GC_E_DEAD;

    schema_builder b = { 0 };
    gc_result r = compile_schema(desc, &b);
    char *name = r == GC_OK ? gc_strdup(desc->name) : NULL;
    if (r == GC_OK && !name)
        r = GC_E_NOMEM;
    uint32_t id = 0;
    if (r == GC_OK)
        r = class_id_alloc(heap, &id);
    gc_header *h = NULL;
    if (r == GC_OK) {
        heap->classes[id] = heap->class_class; /* reserve the id while the object is made */
        /* Class names are their own namespace (gc_class_find), not the object hash. */
        r = gc_object_alloc(heap, heap->class_class, GC_INDEX_NONE, NULL,
                            heap->disregard_open ? 0 : GC_CREATE_ROOT, &h);
        if (r != GC_OK)
            heap->classes[id] = NULL;
    }
    if (r != GC_OK) {
        free(name);
        builder_free(&b);
        return r;
    }
    gc_flags_set(h, GC_F_IS_CLASS);
    gc_class *cls = gc_payload(h);
    cls->name = name;
    cls->size = desc->size;
    cls->super = (gc_class *)desc->super;
    cls->flags = desc->flags;
    cls->id = id;
    cls->schema = b.ops;
    cls->schema_len = b.count - 1;
    cls->mark_schema = merge_ref_runs(cls->schema, cls->schema_len);
    if (!cls->mark_schema)
        cls->mark_schema = cls->schema; /* still correct, only slower */
    const gc_schema_op *first = cls->mark_schema;
    if ((first->kind == GC_OP_REF || first->kind == GC_OP_REF_RUN) &&
        first[1].kind == GC_OP_END) {
        cls->run_offset = first->offset;
        cls->run_count = first->kind == GC_OP_REF ? 1 : first->stride;
    }
    cls->inner_schemas = b.inners;
    cls->inner_count = b.inner_count;
    cls->hooks = inherit_hooks(&desc->hooks, desc->super);
    heap->classes[id] = cls;
    *out_class = cls;
    return GC_OK;
}

const char *gc_class_name(const gc_class *cls)
{
    return cls ? cls->name : NULL;
}

const gc_class *gc_class_super(const gc_class *cls)
{
    return cls ? cls->super : NULL;
}

bool gc_class_is_child_of(const gc_class *cls, const gc_class *base)
{
    for (; cls; cls = cls->super)
        if (cls == base)
            return true;
    return false;
}

void *gc_class_object(const gc_class *cls)
{
    return (void *)cls;
}

uint32_t gc_class_schema_length(const gc_class *cls)
{
    return cls ? cls->schema_len : 0;
}

gc_class *gc_class_find(gc_heap *heap, const char *name)
{
    if (!heap || !name)
        return NULL;
    for (uint32_t id = 0; id < heap->class_count; id++) {
        gc_class *cls = heap->classes[id];
        if (cls && cls->name && strcmp(cls->name, name) == 0 &&
            !gc_header_is_unreachable(heap, gc_hdr(cls)))
            return cls;
    }
    return NULL;
}
