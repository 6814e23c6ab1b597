/*
 * admin_cache.c - a rendered admin page kept for a while (admin_cache.h).
 */
#include "admin_cache.h"

void admin_page_cache_init(admin_page_cache *c)
{
    strbuf_init(&c->body);
    c->rendered_at = 0;
    c->valid = false;
    c->renders = 0;
}

void admin_page_cache_free(admin_page_cache *c)
{
    strbuf_free(&c->body);
    c->valid = false;
}

const strbuf *admin_page_cache_get(admin_page_cache *c, double now, double max_age,
                                   admin_render_fn render, void *ctx)
{
    double age = now - c->rendered_at;

    if (c->valid && max_age > 0 && age >= 0 && age < max_age)
        return &c->body;
    strbuf_reset(&c->body);
    c->renders++;
    render(ctx, &c->body);
    c->rendered_at = now;
    c->valid = true;
    return &c->body;
}
