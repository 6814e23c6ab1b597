/*
 * net_travel.c - the net side of a server travel (reap.proto's Travel): telling the clients,
 * taking them out of replication, carrying a seamless travel's connections and controllers
 * into the next world, and letting them in again.
 *
 * Assumes: the engine calls these in its travel's order (depart; set_worlds whenever the
 * current worlds change; carry, seamless only, before the worlds a connection is in are
 * retired; arrive) between frames or in the gc phase, never inside a handler.
 * Guarantees: no connection holds any entry of a replication index when set_worlds resets
 * it; a connection being carried is never replicated to and never points at a retired world;
 * whatever a client sends during a travel is answered (ERROR_CODE_TRAVEL) or served, never
 * applied to a world that is ending.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "net_internal.h"
#include "net_send.h"
#include "reap_assert.h"

static void net_travel_fill(const net_driver *nd, Reap__Travel *t, Reap__TravelPhase phase)
{
    t->phase = phase;
    t->mode = nd->travel_seamless ? REAP__TRAVEL_MODE__TRAVEL_MODE_SEAMLESS
                                  : REAP__TRAVEL_MODE__TRAVEL_MODE_HARD;
    t->map = (char *)nd->travel_map;
    t->from_map = (char *)nd->travel_from;
    t->transition_map = nd->travel_seamless ? (char *)nd->travel_transition : (char *)"";
    t->frame = *nd->env.frame;
}

void net_driver_travel_depart(net_driver *nd, const char *map, const char *from,
                              const char *transition, bool seamless)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Travel travel = REAP__TRAVEL__INIT;
    uint32_t told = 0, closed = 0;

    nd->travelling = true;
    nd->travel_seamless = seamless;
    snprintf(nd->travel_map, sizeof nd->travel_map, "%s", map);
    snprintf(nd->travel_from, sizeof nd->travel_from, "%s", from);
    snprintf(nd->travel_transition, sizeof nd->travel_transition, "%s", transition);
    net_travel_fill(nd, &travel, REAP__TRAVEL_PHASE__TRAVEL_PHASE_DEPART);
    env.body_case = REAP__ENVELOPE__BODY_TRAVEL;
    env.travel = &travel;
    for (size_t i = 0; i < nd->host->peerCount; i++) {
        net_connection *c = &nd->conns[i];

        if (c->state == NET_CONN_JOINED) {
            /* After every spawn and destroy of the old world, on their channel. */
            net_send(nd, c, MSG_CHANNEL_REPLICATION, &env);
            told++;
            if (seamless) {
                net_repl_leave(nd, c);
                c->state = NET_CONN_TRAVELLING;
                continue;
            }
            net_leave_world(nd, c, "server travel");
        } else if (c->state != NET_CONN_CONNECTED) {
            continue;
        }
        if (seamless) {
            /* Not in a world yet: it says Hello again once the travel is over. */
            net_close_with_error(nd, c, REAP__ERROR_CODE__ERROR_CODE_TRAVEL,
                                 "the server is travelling to another map; connect again in "
                                 "a moment", 0);
            continue;
        }
        /* UE's hard travel: every client is told, then disconnected; it reconnects. */
        c->state = NET_CONN_CLOSING;
        c->said_goodbye = true;
        enet_peer_disconnect_later(c->peer, 0);
        closed++;
    }
    enet_host_flush(nd->host); /* told before a blocking travel stops the frames */
    nd->counters.travels++;
    log_info("net: %s travel to %s: told %u client(s)%s", seamless ? "seamless" : "hard", map,
             told, closed > 0 ? "; disconnected every one, they reconnect" : "");
}

void net_driver_set_worlds(net_driver *nd, world *const *worlds, uint32_t count)
{
    REAP_ASSERT(count <= NET_MAX_WORLDS);
    for (uint32_t w = 0; w < NET_MAX_WORLDS; w++) {
        float step = nd->indexes[w].step;

        /* Every connection left its view before its world was retired: nothing is held. */
        for (uint32_t i = 1; i < nd->indexes[w].count; i++)
            REAP_ASSERT(nd->indexes[w].v[i].refs == 0);
        net_index_free(&nd->indexes[w]);
        net_index_init(&nd->indexes[w], count > 0 ? wire_step_for_extent(worlds[0]->env->extent)
                                                  : step);
    }
    nd->env.worlds = worlds;
    nd->env.world_count = count;
}

uint32_t net_driver_travel_carry(net_driver *nd, world *const *to, uint32_t count)
{
    uint32_t carried = 0;

    for (size_t i = 0; i < nd->host->peerCount; i++) {
        net_connection *c = &nd->conns[i];
        world *from = c->world, *dest;
        gc_result r;

        if (c->state != NET_CONN_TRAVELLING || from == NULL)
            continue;
        dest = to[from->index < count ? from->index : 0];
        r = c->controller != NULL ? world_carry_player(from, dest, c->controller) : GC_OK;
        if (r != GC_OK) {
            log_error("net: player %u '%s' cannot cross into %s: %s", c->player_id, c->name,
                      dest->name, gc_result_str(r));
            net_leave_world(nd, c, "travel failed");
            net_close_with_error(nd, c, REAP__ERROR_CODE__ERROR_CODE_TRAVEL,
                                 "the server could not carry your player across the travel",
                                 0);
            continue;
        }
        from->connections--;
        dest->connections++;
        c->world = dest;
        carried++;
    }
    return carried;
}

void net_driver_travel_arrive(net_driver *nd)
{
    Reap__Travel travel = REAP__TRAVEL__INIT;
    uint32_t arrived = 0;

    for (size_t i = 0; nd->travel_seamless && i < nd->host->peerCount; i++) {
        net_connection *c = &nd->conns[i];
        gc_result r;

        if (c->state != NET_CONN_TRAVELLING)
            continue;
        r = world_restart_player(c->world, c->controller);
        if (r != GC_OK) {
            log_error("net: player %u '%s' cannot restart in %s: %s", c->player_id, c->name,
                      c->world->name, gc_result_str(r));
            net_leave_world(nd, c, "travel failed");
            net_close_with_error(nd, c, REAP__ERROR_CODE__ERROR_CODE_TRAVEL,
                                 "the server could not restart your player after the travel",
                                 0);
            continue;
        }
        c->state = NET_CONN_JOINED;
        c->input_noticed = false;
        net_repl_join(nd, c);
        net_travel_fill(nd, &travel, REAP__TRAVEL_PHASE__TRAVEL_PHASE_ARRIVE);
        net_send_welcome(nd, c, 0, &travel);
        arrived++;
    }
    if (nd->travel_seamless)
        log_info("net: seamless travel to %s: %u player(s) arrived", nd->travel_map, arrived);
    nd->travelling = false;
    nd->load_last_ns = 0; /* admission's load starts again after the travel (net_driver.c) */
}

bool net_driver_travelling(const net_driver *nd)
{
    return nd->travelling;
}

bool net_travel_refuses(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    double now = net_now(nd);
    char text[200];

    switch (env->body_case) {
    case REAP__ENVELOPE__BODY_MOVE_INPUT:
        nd->counters.refused_inputs++;
        /* Inputs come ten times a second: told once a second, as refused inputs are. */
        if (conn->input_noticed && now - conn->last_input_notice < 1.0)
            return true;
        conn->input_noticed = true;
        conn->last_input_notice = now;
        break;
    case REAP__ENVELOPE__BODY_SPAWN_REQUEST:
    case REAP__ENVELOPE__BODY_DESTROY_REQUEST:
    case REAP__ENVELOPE__BODY_REPLICATION_CHECK_REQUEST:
        break;
    default:
        return false;
    }
    nd->counters.travel_refusals++;
    snprintf(text, sizeof text, "%s refused: the server is travelling to %s (seamless); wait "
             "for Travel ARRIVE", msg_body_name(env->body_case), nd->travel_map);
    net_send_error(nd, conn, REAP__ERROR_CODE__ERROR_CODE_TRAVEL, text, env->seq);
    return true;
}
