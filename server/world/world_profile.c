/*
 * world_profile.c - reads a world profile (world_profile.h) with inih, one key at a time, and
 * checks every limit as the key that would break it is read, so that each error names the
 * file, the line and the field. Children name archetypes defined above them: the children form
 * a tree by construction, and a spawn's size and depth are known as soon as they are named.
 */
#include "world_profile.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text_uint.h"

typedef struct profile_ctx {
    world_profile *p;
    char section[96];
    world_profile_archetype *cur;      /* NULL outside an archetype */
    bool in_cells;                     /* in the [cells] section */
    world_profile_map *map;            /* in a [map NAME] section; NULL otherwise */
    char msg[400];
    bool failed;
} profile_ctx;

static const char profile_keys[] =
    "base, components, children, refs, payload, lifetime, cluster, replicated, moves";
static const char profile_cell_keys[] = "placed, player_starts, player_start_sources";
static const char profile_map_keys[] =
    "extent, placed, player_starts, player_start_sources, persistent_props";

static int profile_fail(profile_ctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int profile_fail(profile_ctx *c, const char *key, const char *fmt, ...)
{
    va_list ap;
    int n = 0;

    if (c->failed)
        return 0;
    if (c->cur != NULL)
        n = snprintf(c->msg, sizeof c->msg, "[archetype %s] ", c->cur->name);
    else if (c->in_cells)
        n = snprintf(c->msg, sizeof c->msg, "[cells] ");
    else if (c->map != NULL)
        n = snprintf(c->msg, sizeof c->msg, "[map %s] ", c->map->name);
    if (key != NULL && n >= 0 && (size_t)n < sizeof c->msg)
        n += snprintf(c->msg + n, sizeof c->msg - (size_t)n, "%s: ", key);
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof c->msg)
        vsnprintf(c->msg + n, sizeof c->msg - (size_t)n, fmt, ap);
    va_end(ap);
    c->failed = true;
    return 0;
}

static bool profile_bool(const char *text, bool *out)
{
    static const char *const yes[] = { "yes", "true", "on", "1" };
    static const char *const no[] = { "no", "false", "off", "0" };

    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* Objects and depth of a spawn of a, from its parts and its children (defined above it). */
static void profile_derive(const world_profile *p, world_profile_archetype *a)
{
    uint64_t objects = 1 + a->components;
    uint32_t depth = 1;

    for (uint32_t i = 0; i < a->n_children; i++) {
        const world_profile_archetype *ch = &p->archetypes[a->children[i].archetype];
        objects += (uint64_t)ch->objects * a->children[i].count;
        if (ch->depth + 1 > depth)
            depth = ch->depth + 1;
    }
    a->objects = objects > UINT32_MAX ? UINT32_MAX : (uint32_t)objects;
    a->depth = depth;
}

static int profile_children(profile_ctx *c, world_profile_archetype *a, const char *value)
{
    char buf[512], *save = NULL, *term;

    if (strlen(value) >= sizeof buf)
        return profile_fail(c, "children", "too long (at most %zu characters)", sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", value);
    a->n_children = 0;
    for (term = strtok_r(buf, ",", &save); term != NULL; term = strtok_r(NULL, ",", &save)) {
        char *colon, *name = term, *end;
        uint32_t count = 1;
        int idx;

        while (*name == ' ' || *name == '\t')
            name++;
        end = name + strlen(name);
        while (end > name && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        colon = strchr(name, ':');
        if (colon != NULL) {
            *colon = '\0';
            if (!text_uint(colon + 1, 1, WORLD_PROFILE_CHILD_COUNT_MAX, &count))
                return profile_fail(c, "children", "'%s:%s': expected NAME:N with N in "
                                    "[1, %d]", name, colon + 1, WORLD_PROFILE_CHILD_COUNT_MAX);
        }
        if (name[0] == '\0')
            return profile_fail(c, "children", "an empty name (expected NAME:N,...)");
        idx = world_profile_find(c->p, name);
        if (idx < 0 || &c->p->archetypes[idx] == a)
            return profile_fail(c, "children", "'%s' is not an archetype defined above this "
                                "one (children name archetypes defined earlier in the file)",
                                name);
        if (a->n_children >= WORLD_PROFILE_CHILDREN_MAX)
            return profile_fail(c, "children", "more than %d kinds of children",
                                WORLD_PROFILE_CHILDREN_MAX);
        a->children[a->n_children].archetype = (uint32_t)idx;
        a->children[a->n_children].count = count;
        a->n_children++;
    }
    return 1;
}

static int profile_refs(profile_ctx *c, world_profile_archetype *a, const char *value)
{
    static const char *const kinds[] = { "owner", "siblings", "level", "earlier", "placed" };
    char buf[512], *save = NULL, *term;

    if (strlen(value) >= sizeof buf)
        return profile_fail(c, "refs", "too long (at most %zu characters)", sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", value);
    a->n_refs = 0;
    for (term = strtok_r(buf, ",", &save); term != NULL; term = strtok_r(NULL, ",", &save)) {
        world_profile_ref r = { WORLD_PROFILE_REF_OWNER, 1, false, WORLD_PROFILE_HOLD_REF };
        char *t = term, *colon, *end;
        bool known = false;

        while (*t == ' ' || *t == '\t')
            t++;
        end = t + strlen(t);
        while (end > t && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        if (strncmp(t, "weak ", 5) == 0) {
            r.weak = true;
            r.hold = WORLD_PROFILE_HOLD_WEAK;
            for (t += 5; *t == ' '; t++)
                ;
        } else if (strncmp(t, "strong ", 7) == 0) {
            r.hold = WORLD_PROFILE_HOLD_STRONG;
            for (t += 7; *t == ' '; t++)
                ;
        }
        colon = strchr(t, ':');
        if (colon != NULL)
            *colon = '\0';
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            if (strcmp(t, kinds[k]) == 0) {
                r.kind = (world_profile_ref_kind)k;
                known = true;
            }
        if (!known)
            return profile_fail(c, "refs", "'%s': expected owner, siblings, level, "
                                "earlier:N or placed, each optionally after 'weak' or 'strong'",
                                t);
        if (r.kind == WORLD_PROFILE_REF_EARLIER) {
            if (colon == NULL || !text_uint(colon + 1, 1, WORLD_PROFILE_EARLIER_MAX,
                                               &r.count))
                return profile_fail(c, "refs", "'earlier%s%s': expected earlier:N with N in "
                                    "[1, %d]", colon != NULL ? ":" : "",
                                    colon != NULL ? colon + 1 : "", WORLD_PROFILE_EARLIER_MAX);
        } else if (colon != NULL) {
            return profile_fail(c, "refs", "'%s:%s': only earlier takes a count", t,
                                colon + 1);
        }
        if (a->n_refs >= WORLD_PROFILE_REFS_MAX)
            return profile_fail(c, "refs", "more than %d terms", WORLD_PROFILE_REFS_MAX);
        a->refs[a->n_refs++] = r;
    }
    return 1;
}

static int profile_key(profile_ctx *c, world_profile_archetype *a, const char *key,
                       const char *value)
{
    bool b;

    if (strcmp(key, "base") == 0) {
        if (strcmp(value, "actor") == 0)
            a->base = WORLD_PROFILE_BASE_ACTOR;
        else if (strcmp(value, "component") == 0)
            a->base = WORLD_PROFILE_BASE_COMPONENT;
        else
            return profile_fail(c, key, "'%s': expected actor or component", value);
    } else if (strcmp(key, "components") == 0) {
        if (!text_uint(value, 0, WORLD_PROFILE_COMPONENTS_MAX, &a->components))
            return profile_fail(c, key, "'%s': expected an integer in [0, %d]", value,
                                WORLD_PROFILE_COMPONENTS_MAX);
    } else if (strcmp(key, "children") == 0) {
        if (!profile_children(c, a, value))
            return 0;
    } else if (strcmp(key, "refs") == 0) {
        if (!profile_refs(c, a, value))
            return 0;
    } else if (strcmp(key, "payload") == 0) {
        if (!text_uint(value, 0, WORLD_PROFILE_PAYLOAD_MAX, &a->payload))
            return profile_fail(c, key, "'%s': expected bytes, an integer in [0, %d]", value,
                                WORLD_PROFILE_PAYLOAD_MAX);
    } else if (strcmp(key, "lifetime") == 0) {
        char *end;
        double s;

        if (strcmp(value, "visit") == 0) {
            a->lifetime = WORLD_PROFILE_LIFETIME_VISIT;
        } else if (strcmp(value, "persistent") == 0) {
            a->lifetime = WORLD_PROFILE_LIFETIME_PERSISTENT;
        } else if (strcmp(value, "instance") == 0) {
            a->lifetime = WORLD_PROFILE_LIFETIME_INSTANCE;
        } else {
            s = strtod(value, &end);
            if (end == value || *end != '\0' || !(s > 0 && s <= 86400))
                return profile_fail(c, key, "'%s': expected visit, persistent, instance or "
                                    "seconds in (0, 86400]", value);
            a->lifetime = WORLD_PROFILE_LIFETIME_SECONDS;
            a->seconds = s;
        }
    } else if (strcmp(key, "cluster") == 0 || strcmp(key, "replicated") == 0 ||
               strcmp(key, "moves") == 0) {
        if (!profile_bool(value, &b))
            return profile_fail(c, key, "'%s': expected yes or no", value);
        if (key[0] == 'c')
            a->cluster = b;
        else if (key[0] == 'r')
            a->replicated = b;
        else
            a->moves = b;
    } else {
        return profile_fail(c, NULL, "unknown field '%s' (known: %s)", key, profile_keys);
    }
    if (a->lifetime == WORLD_PROFILE_LIFETIME_INSTANCE &&
        (a->base == WORLD_PROFILE_BASE_COMPONENT || a->cluster))
        return profile_fail(c, key, "a lifetime = instance archetype is an actor the game "
                            "instance holds on its own: base = actor and cluster = no");
    if (a->base == WORLD_PROFILE_BASE_COMPONENT && (a->components > 0 || a->n_children > 0))
        return profile_fail(c, key, "a component archetype has no components or children of "
                            "its own (base = actor for that)");
    profile_derive(c->p, a);
    if (a->depth > WORLD_PROFILE_DEPTH_MAX)
        return profile_fail(c, key, "children nest %u deep (at most %d)", a->depth,
                            WORLD_PROFILE_DEPTH_MAX);
    if (a->objects > WORLD_PROFILE_SPAWN_OBJECTS_MAX)
        return profile_fail(c, key, "one spawn would create %u objects (at most %d)",
                            a->objects, WORLD_PROFILE_SPAWN_OBJECTS_MAX);
    return 1;
}

/* Objects one cell places: each placed actor is a spawn of its archetype. */
static uint64_t profile_cell_objects(const world_profile *p, const world_profile_cells *cells)
{
    uint64_t objects = 0;

    for (uint32_t i = 0; i < cells->n_placed; i++)
        objects += (uint64_t)p->archetypes[cells->placed[i].archetype].objects *
                   cells->placed[i].count;
    return objects;
}

/* The cells the section being read describes: [cells], or a [map NAME]'s. */
static world_profile_cells *profile_cur_cells(profile_ctx *c)
{
    return c->map != NULL ? &c->map->cells : &c->p->cells;
}

static int profile_placed(profile_ctx *c, const char *value)
{
    world_profile_cells *cells = profile_cur_cells(c);
    char buf[512], *save = NULL, *term;
    char above[WORLD_PROFILE_NAME_MAX + 8];
    uint64_t objects;

    if (c->map != NULL)
        snprintf(above, sizeof above, "map %s", c->map->name);
    else
        snprintf(above, sizeof above, "cells");
    cells->present = true;

    if (strlen(value) >= sizeof buf)
        return profile_fail(c, "placed", "too long (at most %zu characters)", sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", value);
    cells->n_placed = 0;
    for (term = strtok_r(buf, ",", &save); term != NULL; term = strtok_r(NULL, ",", &save)) {
        char *colon, *name = term, *end;
        uint32_t count = 1;
        int idx;

        while (*name == ' ' || *name == '\t')
            name++;
        end = name + strlen(name);
        while (end > name && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        colon = strchr(name, ':');
        if (colon != NULL) {
            *colon = '\0';
            if (!text_uint(colon + 1, 1, WORLD_PROFILE_PLACED_COUNT_MAX, &count))
                return profile_fail(c, "placed", "'%s:%s': expected NAME:N with N in [1, %d]",
                                    name, colon + 1, WORLD_PROFILE_PLACED_COUNT_MAX);
        }
        if (name[0] == '\0')
            return profile_fail(c, "placed", "an empty name (expected NAME:N,...)");
        idx = world_profile_find(c->p, name);
        if (idx < 0)
            return profile_fail(c, "placed", "'%s' is not an archetype defined above [%s]",
                                name, above);
        if (c->p->archetypes[idx].base != WORLD_PROFILE_BASE_ACTOR)
            return profile_fail(c, "placed", "'%s' is a component archetype: a cell places "
                                "actors (base = actor)", name);
        if (c->p->archetypes[idx].lifetime == WORLD_PROFILE_LIFETIME_INSTANCE)
            return profile_fail(c, "placed", "'%s' has lifetime = instance: the game instance "
                                "holds it, outside every level", name);
        if (cells->n_placed >= WORLD_PROFILE_PLACED_MAX)
            return profile_fail(c, "placed", "more than %d kinds of placed actors",
                                WORLD_PROFILE_PLACED_MAX);
        cells->placed[cells->n_placed].archetype = (uint32_t)idx;
        cells->placed[cells->n_placed].count = count;
        cells->n_placed++;
    }
    objects = profile_cell_objects(c->p, cells);
    if (objects > WORLD_PROFILE_CELL_OBJECTS_MAX)
        return profile_fail(c, "placed", "one cell would place %llu objects (at most %d)",
                            (unsigned long long)objects, WORLD_PROFILE_CELL_OBJECTS_MAX);
    cells->objects = (uint32_t)objects;
    return 1;
}

static int profile_cell_key(profile_ctx *c, const char *key, const char *value)
{
    if (strcmp(key, "placed") == 0)
        return profile_placed(c, value);
    if (strcmp(key, "player_start_sources") == 0) {
        if (!profile_bool(value, &profile_cur_cells(c)->start_sources))
            return profile_fail(c, key, "'%s': expected yes or no", value);
        return 1;
    }
    if (strcmp(key, "player_starts") == 0) {
        if (!text_uint(value, 0, WORLD_PROFILE_PLAYER_STARTS_MAX,
                       &profile_cur_cells(c)->player_starts))
            return profile_fail(c, key, "'%s': expected an integer in [0, %d]", value,
                                WORLD_PROFILE_PLAYER_STARTS_MAX);
        return 1;
    }
    return profile_fail(c, NULL, "unknown field '%s' (known: %s)", key, profile_cell_keys);
}

/* A [map NAME] field: the cell keys, and what only a map has. */
static int profile_map_key(profile_ctx *c, const char *key, const char *value)
{
    world_profile_map *m = c->map;

    if (strcmp(key, "extent") == 0) {
        char *end;
        double v = strtod(value, &end);

        if (end == value || *end != '\0' || !(v >= WORLD_PROFILE_EXTENT_MIN &&
                                              v <= WORLD_PROFILE_EXTENT_MAX))
            return profile_fail(c, key, "'%s': expected world units in [%d, %d] (the map's "
                                "world.Extent)", value, WORLD_PROFILE_EXTENT_MIN,
                                WORLD_PROFILE_EXTENT_MAX);
        m->extent = (float)v;
        return 1;
    }
    if (strcmp(key, "persistent_props") == 0) {
        if (!text_uint(value, 0, WORLD_PROFILE_PERSISTENT_PROPS_MAX, &m->persistent_props))
            return profile_fail(c, key, "'%s': expected an integer in [0, %d] (the map's "
                                "world.PersistentProps)", value,
                                WORLD_PROFILE_PERSISTENT_PROPS_MAX);
        m->has_persistent_props = true;
        return 1;
    }
    if (strcmp(key, "placed") == 0 || strcmp(key, "player_starts") == 0 ||
        strcmp(key, "player_start_sources") == 0)
        return profile_cell_key(c, key, value);
    return profile_fail(c, NULL, "unknown field '%s' (known: %s)", key, profile_map_keys);
}

static bool profile_name_ok(const char *name)
{
    if (name[0] == '\0' || strlen(name) >= WORLD_PROFILE_NAME_MAX)
        return false;
    for (const char *s = name; *s != '\0'; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static int profile_section(profile_ctx *c, const char *section)
{
    world_profile_archetype *a;
    const char *name;

    c->cur = NULL;
    c->in_cells = false;
    c->map = NULL;
    if (strncmp(section, "map ", 4) == 0) {
        world_profile_map *m;

        for (name = section + 4; *name == ' '; name++)
            ;
        if (!profile_name_ok(name))
            return profile_fail(c, NULL, "[%s]: a map's name is 1-%d letters, digits or _",
                                section, WORLD_PROFILE_NAME_MAX - 1);
        if (world_profile_map_find(c->p, name) >= 0)
            return profile_fail(c, NULL, "[%s]: map '%s' is defined twice", section, name);
        if (c->p->n_maps >= WORLD_PROFILE_MAPS_MAX)
            return profile_fail(c, NULL, "[%s]: more than %d maps", section,
                                WORLD_PROFILE_MAPS_MAX);
        m = &c->p->maps[c->p->n_maps++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "%s", name);
        c->map = m;
        return 1;
    }
    if (strcmp(section, "cells") == 0) {
        if (c->p->cells.present)
            return profile_fail(c, NULL, "[cells] is given twice");
        c->p->cells.present = true;
        c->in_cells = true;
        return 1;
    }
    if (strncmp(section, "archetype ", 10) != 0)
        return profile_fail(c, NULL, "unknown section [%s] (expected [archetype NAME], "
                            "[cells] or [map NAME])", section);
    for (name = section + 10; *name == ' '; name++)
        ;
    if (!profile_name_ok(name))
        return profile_fail(c, NULL, "[%s]: an archetype's name is 1-%d letters, digits or _",
                            section, WORLD_PROFILE_NAME_MAX - 1);
    if (world_profile_find(c->p, name) >= 0)
        return profile_fail(c, NULL, "[%s]: archetype '%s' is defined twice", section, name);
    if (c->p->n >= WORLD_PROFILE_ARCHETYPES_MAX)
        return profile_fail(c, NULL, "[%s]: more than %d archetypes", section,
                            WORLD_PROFILE_ARCHETYPES_MAX);
    a = &c->p->archetypes[c->p->n++];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->replicated = true;
    a->objects = a->depth = 1;
    c->cur = a;
    return 1;
}

static int profile_ini_cb(void *user, const char *section, const char *key, const char *value)
{
    profile_ctx *c = user;

    if (c->failed)
        return 0;
    /* inih reports keys with their section; a section begins where the name changes. */
    if (strcmp(section, c->section) != 0) {
        snprintf(c->section, sizeof c->section, "%s", section);
        if (!profile_section(c, section))
            return 0;
    }
    if (c->in_cells)
        return profile_cell_key(c, key, value);
    if (c->map != NULL)
        return profile_map_key(c, key, value);
    if (c->cur == NULL)
        return profile_fail(c, NULL, "'%s' outside a section: expected [archetype NAME] first",
                            key);
    return profile_key(c, c->cur, key, value);
}

static bool profile_finish(profile_ctx *c, const char *name, int line, char *err,
                           size_t err_size)
{
    if (line < 0) {
        snprintf(err, err_size, "cannot read the world profile '%s': %s", name,
                 line == -1 ? strerror(errno) : "out of memory");
        return false;
    }
    if (line > 0 || c->failed) {
        snprintf(err, err_size, "%s:%d: %s", name, line, c->msg[0] != '\0' ? c->msg :
                 "not an ini line (expected [archetype NAME] or field = value)");
        return false;
    }
    if (c->p->n == 0) {
        snprintf(err, err_size, "%s: no [archetype NAME] section: a profile needs at least one",
                 name);
        return false;
    }
    return true;
}

/* inih reports keys, not sections: a [map NAME] with no key is a map all the same (one with
 * the server's settings and no cells). A name inih would have refused is left out. */
static void profile_empty_map(world_profile *p, const char *h, size_t len)
{
    char name[WORLD_PROFILE_NAME_MAX];
    const char *end = memchr(h, ']', len);
    size_t n;

    if (end == NULL || (size_t)(end - h) < 5 || strncmp(h, "map ", 4) != 0)
        return;
    for (h += 4; h < end && *h == ' '; h++)
        ;
    n = (size_t)(end - h);
    if (n == 0 || n >= sizeof name || p->n_maps >= WORLD_PROFILE_MAPS_MAX)
        return;
    memcpy(name, h, n);
    name[n] = '\0';
    if (!profile_name_ok(name) || world_profile_map_find(p, name) >= 0)
        return;
    memset(&p->maps[p->n_maps], 0, sizeof p->maps[p->n_maps]);
    snprintf(p->maps[p->n_maps].name, sizeof p->maps[p->n_maps].name, "%s", name);
    p->n_maps++;
}

/* inih does not say where a section starts: find each archetype's header line for the
 * messages the compiler writes later. */
static void profile_section_lines(world_profile *p, const char *text)
{
    uint32_t line = 1;

    for (const char *s = text; *s != '\0'; line++) {
        const char *eol = strchr(s, '\n');
        size_t len = eol != NULL ? (size_t)(eol - s) : strlen(s);
        const char *t = s;

        while (t < s + len && (*t == ' ' || *t == '\t'))
            t++;
        if (t < s + len && *t == '[')
            profile_empty_map(p, t + 1, len - (size_t)(t + 1 - s));
        if (t < s + len && *t == '[') {
            if (p->cells.present && p->cells.line == 0 && len - (size_t)(t - s) >= 7 &&
                strncmp(t, "[cells]", 7) == 0)
                p->cells.line = line;
            for (uint32_t i = 0; i < p->n; i++) {
                const char *name = p->archetypes[i].name;
                const char *n = memchr(t, ']', len - (size_t)(t - s));
                size_t nl = strlen(name);

                if (p->archetypes[i].line == 0 && n != NULL && (size_t)(n - t) > nl &&
                    memcmp(n - nl, name, nl) == 0 && (n - nl)[-1] == ' ')
                    p->archetypes[i].line = line;
            }
        }
        s = eol != NULL ? eol + 1 : s + len;
    }
}

bool world_profile_parse(world_profile *out, const char *name, const char *text, char *err,
                         size_t err_size)
{
    profile_ctx c = { out, "", NULL, false, NULL, "", false };

    out->n = 0;
    out->n_maps = 0;
    memset(&out->cells, 0, sizeof out->cells);
    if (!profile_finish(&c, name, ini_parse_string(text, profile_ini_cb, &c), err, err_size))
        return false;
    profile_section_lines(out, text);
    return true;
}

bool world_profile_load(world_profile *out, const char *path, char *err, size_t err_size)
{
    enum { PROFILE_FILE_MAX = 1 << 20 };
    FILE *f = fopen(path, "rb");
    char *text;
    size_t len;
    bool ok;

    out->n = 0;
    out->n_maps = 0;
    memset(&out->cells, 0, sizeof out->cells);
    if (f == NULL) {
        snprintf(err, err_size, "cannot read the world profile '%s': %s", path, strerror(errno));
        return false;
    }
    text = malloc(PROFILE_FILE_MAX + 1);
    if (text == NULL) {
        fclose(f);
        snprintf(err, err_size, "cannot read the world profile '%s': out of memory", path);
        return false;
    }
    len = fread(text, 1, PROFILE_FILE_MAX + 1, f);
    if (ferror(f) || len > PROFILE_FILE_MAX) {
        snprintf(err, err_size, "cannot read the world profile '%s': %s", path,
                 ferror(f) ? strerror(errno) : "larger than 1 MiB");
        fclose(f);
        free(text);
        return false;
    }
    fclose(f);
    text[len] = '\0';
    if (memchr(text, '\0', len) != NULL) {
        snprintf(err, err_size, "%s: not a text file (it holds a NUL byte)", path);
        free(text);
        return false;
    }
    ok = world_profile_parse(out, path, text, err, err_size);
    free(text);
    return ok;
}

int world_profile_map_find(const world_profile *p, const char *name)
{
    for (uint32_t i = 0; i < p->n_maps; i++)
        if (strcmp(p->maps[i].name, name) == 0)
            return (int)i;
    return -1;
}

int world_profile_find(const world_profile *p, const char *name)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (strcmp(p->archetypes[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The server's own classes (world.c) and the collector's: no archetype may take these names. */
static const char *const profile_reserved[] = {
    "Class", "World", "Level", "Actor", "WorldSettings", "DefaultVolume", "PlayerController",
    "Pawn", "MovementComponent", "CollisionComponent", "Projectile", "Prop", "PropPart",
    "GameInstance",
};

/* Whether name is a reserved class, the name of archetype j < upto, or the parts' class of
 * archetype j < upto other than `self`. */
static bool profile_name_taken(const world_profile *p, uint32_t upto, uint32_t self,
                               const char *name)
{
    char part[WORLD_PROFILE_NAME_MAX + 8];

    for (size_t i = 0; i < sizeof profile_reserved / sizeof profile_reserved[0]; i++)
        if (strcmp(profile_reserved[i], name) == 0)
            return true;
    for (uint32_t i = 0; i < upto; i++) {
        if (strcmp(p->archetypes[i].name, name) == 0)
            return true;
        snprintf(part, sizeof part, "%sPart", p->archetypes[i].name);
        if (i != self && p->archetypes[i].components > 0 && strcmp(part, name) == 0)
            return true;
    }
    return false;
}

bool world_profile_check_names(const world_profile *p, const char *path, char *err,
                               size_t err_size)
{
    char part[WORLD_PROFILE_NAME_MAX + 8];

    for (uint32_t i = 0; i < p->n; i++) {
        const world_profile_archetype *a = &p->archetypes[i];

        if (profile_name_taken(p, i, i, a->name)) {
            snprintf(err, err_size, "%s:%u: [archetype %s]: the name is taken by a built-in "
                     "class or another archetype's class", path, a->line, a->name);
            return false;
        }
        snprintf(part, sizeof part, "%sPart", a->name);
        if (a->components > 0 && profile_name_taken(p, p->n, i, part)) {
            snprintf(err, err_size, "%s:%u: [archetype %s] components: its parts' class '%s' is "
                     "taken by a built-in class or another archetype", path, a->line, a->name,
                     part);
            return false;
        }
    }
    return true;
}
