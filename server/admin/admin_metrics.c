/*
 * admin_metrics.c - the /metrics page in the Prometheus text format (version 0.0.4).
 *
 * Names are an outward contract (operators and checks rely on them); counters end in _total, times are in
 * seconds, and every family has HELP and TYPE lines (promtool check metrics passes).
 */
#include "admin.h"

#include "engine.h"
#include "net_driver.h"
#include "sysmem.h"

static void metric_header(strbuf *out, const char *name, const char *type, const char *help)
{
    strbuf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metric_u64(strbuf *out, const char *name, const char *type, const char *help,
                       uint64_t value)
{
    metric_header(out, name, type, help);
    strbuf_printf(out, "%s %llu\n", name, (unsigned long long)value);
}

/* One series of a family counted by reason. Every reason is written, zero or not, so the
 * family always sums to the whole. */
static void metric_reason(strbuf *out, const char *name, const char *reason, uint64_t value)
{
    strbuf_printf(out, "%s{reason=\"%s\"} %llu\n", name, reason, (unsigned long long)value);
}

static void metric_f64(strbuf *out, const char *name, const char *type, const char *help,
                       double value)
{
    metric_header(out, name, type, help);
    strbuf_printf(out, "%s %.9g\n", name, value);
}

static void admin_metrics_render_frame(engine *e, strbuf *out);
static void admin_metrics_render_levels(engine *e, strbuf *out);
static void admin_metrics_render_travel(engine *e, strbuf *out);

/* Series an operator of the process watches first (the process_* names are Prometheus'
 * client conventions), and the admin endpoint's own. */
static void admin_metrics_render_ops(engine *e, strbuf *out)
{
    sysmem_process proc;

    metric_u64(out, "reap_frames_total", "counter", "Frames run since the server started.",
               e->frame);
    metric_u64(out, "reap_players_max", "gauge", "Connections accepted at once (--max-players).",
               e->opts.max_players);
    if (e->admin != NULL)
        metric_u64(out, "reap_admin_unauthorized_total", "counter",
                   "POST /console requests refused for a missing or wrong admin token.",
                   admin_unauthorized_count(e->admin));
    if (e->admin != NULL) {
        metric_header(out, "reap_admin_page_renders_total", "counter",
                      "Renders of GET /metrics and /stats.json (at most one per "
                      "admin.MetricsCacheSeconds; requests in between get that copy).");
        strbuf_printf(out, "reap_admin_page_renders_total{page=\"metrics\"} %llu\n",
                      (unsigned long long)admin_page_renders(e->admin, ADMIN_PAGE_METRICS));
        strbuf_printf(out, "reap_admin_page_renders_total{page=\"stats.json\"} %llu\n",
                      (unsigned long long)admin_page_renders(e->admin, ADMIN_PAGE_STATS));
    }
    if (!sysmem_process_read(&proc))
        return;
    metric_u64(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
               proc.resident_bytes);
    metric_f64(out, "process_cpu_seconds_total", "counter",
               "Total user and system CPU time spent in seconds.", proc.cpu_seconds);
    metric_header(out, "process_start_time_seconds", "gauge",
                  "Start time of the process since unix epoch in seconds.");
    strbuf_printf(out, "process_start_time_seconds %.2f\n", proc.start_time_seconds);
}

void admin_metrics_render(engine *e, strbuf *out)
{
    const net_driver_counters *nc = net_driver_counters_get(e->net);
    gc_stats st;

    gc_stats_get(e->heap, &st);
    metric_header(out, "reap_build_info", "gauge", "Build information; the value is always 1.");
    strbuf_printf(out, "reap_build_info{version=\"%s\"} 1\n", REAP_VERSION);

    metric_u64(out, "reap_gc_objects", "gauge", "Live collected objects, permanent ones included.",
               gc_object_count(e->heap));
    metric_u64(out, "reap_gc_objects_disregarded", "gauge",
               "Permanent objects created in the disregard-for-GC pool (never scanned).",
               gc_permanent_count(e->heap));
    metric_u64(out, "reap_gc_clusters", "gauge", "Live object clusters.",
               gc_cluster_count(e->heap));
    metric_u64(out, "reap_gc_heap_bytes", "gauge",
               "Memory the collector holds from the system for objects (slabs, large blocks).",
               gc_heap_bytes(e->heap));
    metric_header(out, "reap_gc_collections_total", "counter",
                  "Completed reachability analyses, by kind (full purge or incremental purge).");
    strbuf_printf(out, "reap_gc_collections_total{kind=\"full\"} %llu\n",
                  (unsigned long long)st.collections_full);
    strbuf_printf(out, "reap_gc_collections_total{kind=\"incremental\"} %llu\n",
                  (unsigned long long)(st.collections - st.collections_full));
    metric_u64(out, "reap_gc_objects_destroyed_total", "counter",
               "Objects the collector has destroyed and freed.", st.objects_destroyed);
    metric_u64(out, "reap_gc_assumption_violations_total", "counter",
               "Collector assumptions found broken before marking (gc.VerifyAssumptions).",
               e->gc_assumption_violations);
    metric_u64(out, "reap_gc_garbage_references_total", "counter",
               "References to garbage objects nulled (gc.GarbageReferenceTrackingEnabled).",
               e->gc_garbage_references);
    metric_u64(out, "reap_gc_try_collect_failures_total", "counter",
               "Collections skipped because another thread held the GC lock.",
               st.try_collect_failures);
    metric_f64(out, "reap_gc_interval_seconds", "gauge",
               "Seconds between collections in force this frame (idle-server and low-memory "
               "rules applied).", e->gc.interval);
    metric_f64(out, "reap_gc_time_since_last_purge_seconds", "gauge",
               "Seconds counted towards the next collection.", e->gc.time_since_last_purge);
    metric_u64(out, "reap_gc_purge_pending", "gauge",
               "1 while an incremental purge is in progress.",
               gc_is_incremental_purge_pending(e->heap) ? 1 : 0);
    stats_histogram_write(&e->gc_mark_seconds, "reap_gc_mark_seconds",
                          "Reachability analysis time per collection.", out);
    stats_histogram_write(&e->gc_frame_work_seconds, "reap_gc_frame_work_seconds",
                          "Collector work per frame that did any (mark, purge slice).", out);
    stats_histogram_write(&e->gc_frame_budget_seconds, "reap_gc_frame_budget_seconds",
                          "Collector budget pacing gave each frame with collector work "
                          "(gc.FrameSlackPacing).", out);
    stats_histogram_write(&e->gc_collection_seconds, "reap_gc_collection_span_seconds",
                          "Interval collections: seconds from start to the end of their purge.",
                          out);
    metric_u64(out, "reap_gc_collection_last_frames", "gauge",
               "Frames the last interval collection spanned, start to end of purge.",
               e->gc.last_frames);
    metric_f64(out, "reap_gc_collection_last_late_seconds", "gauge",
               "How late the last interval collection ended against UE's schedule (negative: "
               "before the moment UE would have collected).", e->gc.last_late_seconds);
    metric_u64(out, "reap_gc_early_starts_total", "counter",
               "Collections pacing started before the interval, in a frame's slack.",
               e->gc.early_starts);
    metric_header(out, "reap_gc_collections_by_reason_total", "counter",
                  "Collections started, by what started them: the interval, a level streamed "
                  "out, levels pending purge, the low-memory interval, a forcing cvar, the "
                  "console.");
    for (int r = ENGINE_GC_REASON_INTERVAL; r < ENGINE_GC_REASON_COUNT; r++)
        metric_reason(out, "reap_gc_collections_by_reason_total",
                      engine_gc_reason_name((engine_gc_reason)r), e->gc.by_reason[r]);

    metric_u64(out, "reap_players_connected", "gauge", "Players that joined a world.",
               net_driver_player_count(e->net));
    metric_u64(out, "reap_net_connections", "gauge", "Open client connections.",
               net_driver_connection_count(e->net));
    metric_header(out, "reap_world_actors", "gauge", "Live actors per world.");
    for (uint32_t i = 0; i < e->world_count; i++)
        strbuf_printf(out, "reap_world_actors{world=\"%s\"} %u\n", e->worlds[i]->name,
                      world_actor_count(e->worlds[i]));
    metric_header(out, "reap_world_actor_slots", "gauge",
                  "Actor array length per world, null slots included.");
    for (uint32_t i = 0; i < e->world_count; i++)
        strbuf_printf(out, "reap_world_actor_slots{world=\"%s\"} %u\n", e->worlds[i]->name,
                      world_actor_slots(e->worlds[i]));

    if (e->env.n_archetypes > 0) {
        uint32_t counts[2 * WORLD_PROFILE_ARCHETYPES_MAX];

        /* One pass over the objects, only with a world profile (the default profile's classes
         * are in reap_world_actors and `obj list`). */
        world_archetype_census(&e->env, e->heap, counts);
        metric_header(out, "reap_world_objects_by_class", "gauge",
                      "Live objects of each world profile class (archetypes and their parts).");
        for (uint32_t i = 0; i < e->env.n_archetypes; i++) {
            const world_archetype *a = &e->env.archetypes[i];

            strbuf_printf(out, "reap_world_objects_by_class{class=\"%s\"} %u\n",
                          gc_class_name(a->cls), counts[2 * i]);
            if (a->part_cls != NULL)
                strbuf_printf(out, "reap_world_objects_by_class{class=\"%s\"} %u\n",
                              gc_class_name(a->part_cls), counts[2 * i + 1]);
        }
    }
    admin_metrics_render_levels(e, out);
    admin_metrics_render_travel(e, out);
    stats_histogram_write(&e->tick_seconds, "reap_tick_seconds", "Work time of one frame.", out);
    metric_u64(out, "reap_frame", "gauge",
               "Deprecated (removed in the next release): use reap_frames_total.", e->frame);
    admin_metrics_render_ops(e, out);
    metric_u64(out, "reap_slow_frames_total", "counter",
               "Frames longer than engine.SlowFrameMs.", e->slow_frames);
    metric_u64(out, "reap_frames_over_budget_total", "counter",
               "Frames longer than the frame period (1 / --tick-hz).", e->frames_over_budget);
    metric_u64(out, "reap_frames_over_budget_gc_total", "counter",
               "Frames over the period that would have fit without their gc phase: the "
               "collector's.", e->frames_over_budget_gc);
    metric_u64(out, "reap_net_bad_messages_total", "counter",
               "Client messages answered with an error (undecodable, unknown, oversize or over "
               "policy).", nc->bad_messages);
    metric_u64(out, "reap_net_bad_datagrams_total", "counter",
               "UDP datagrams that were not ENet protocol for this server.", nc->bad_datagrams);
    {
        uint64_t kicked = 0;

        for (int r = 0; r < NET_KICK_REASONS; r++)
            kicked += nc->kicked_by[r];
        metric_u64(out, "reap_net_kicked_total", "counter",
                   "Connections the server disconnected (every reason).", kicked);
    }
    metric_header(out, "reap_net_kicked_by_reason_total", "counter",
                  "Connections the server disconnected, by reason: too many bad messages, no "
                  "hello in time, flooding.");
    for (int r = 0; r < NET_KICK_REASONS; r++)
        metric_reason(out, "reap_net_kicked_by_reason_total",
                      net_kick_reason_name((net_kick_reason)r), nc->kicked_by[r]);
    metric_u64(out, "reap_net_refused_full_total", "counter",
               "Connections refused because the server was full.", nc->refused_full);
    metric_header(out, "reap_net_refused_joins_total", "counter",
                  "Connections refused a place in a world, by reason: busy (admission control, "
                  "ERROR_CODE_BUSY), full (--max-players or no room for the player), a travel "
                  "under way, another protocol version, a bad hello (player name), no such "
                  "world.");
    for (int r = 0; r < NET_REFUSE_REASONS; r++)
        metric_reason(out, "reap_net_refused_joins_total",
                      net_refuse_reason_name((net_refuse_reason)r), nc->refused_joins[r]);
    {
        net_driver_admission adm;

        net_driver_admission_get(e->net, &adm);
        metric_u64(out, "reap_net_admission_refusing", "gauge",
                   "1 while admission control refuses new players (the load reached "
                   "net.Admission.HighLoad, or frames were lost from net.Admission.LowLoad on, "
                   "and it has not fallen below net.Admission.LowLoad).",
                   adm.refusing ? 1 : 0);
        metric_f64(out, "reap_net_admission_load", "gauge",
                   "The loop's work per frame over the frame period, averaged over "
                   "net.Admission.WindowSeconds (1: busy the whole period).", adm.load);
        metric_u64(out, "reap_net_admission_stretched_bands", "gauge",
                   "Update bands admission control runs at twice their period, farthest "
                   "first (0-3; the nearest band never).", adm.stretched_bands);
    }
    metric_u64(out, "reap_net_oversize_packets_total", "counter",
               "Packets too large for the transport to reassemble, refused.",
               nc->oversize_packets);
    metric_u64(out, "reap_net_connects_total", "counter", "Client connections accepted.",
               nc->connects);
    metric_u64(out, "reap_net_timeouts_total", "counter",
               "Connections that ended without a goodbye (timeout or abrupt loss).",
               nc->timeouts);
    admin_metrics_render_frame(e, out);
}

/* Levels by state and what streaming did (world_streaming.h). */
static void admin_metrics_render_levels(engine *e, strbuf *out)
{
    static const world_level_state shown[] = { WORLD_LEVEL_LOADED, WORLD_LEVEL_LOADING,
                                               WORLD_LEVEL_UNLOADING,
                                               WORLD_LEVEL_PENDING_PURGE };
    const world_streaming_stats *s = &e->env.streaming.stats;

    metric_header(out, "reap_world_levels", "gauge",
                  "Levels per world by state (the persistent level counts as loaded; streaming "
                  "cells by their state, pending_purge: streamed out, waiting for a "
                  "collection).");
    for (uint32_t i = 0; i < e->world_count; i++) {
        const world *w = e->worlds[i];

        for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++)
            strbuf_printf(out, "reap_world_levels{world=\"%s\",state=\"%s\"} %u\n", w->name,
                          world_level_state_name(shown[k]),
                          w->streaming.counts[shown[k]] +
                              (shown[k] == WORLD_LEVEL_LOADED ? 1u : 0u));
    }
    metric_header(out, "reap_world_level_streams_total", "counter",
                  "Streaming levels made visible (in) and removed from their world (out).");
    strbuf_printf(out, "reap_world_level_streams_total{direction=\"in\"} %llu\n",
                  (unsigned long long)s->streamed_in);
    strbuf_printf(out, "reap_world_level_streams_total{direction=\"out\"} %llu\n",
                  (unsigned long long)s->streamed_out);
    stats_histogram_write(&s->load_wait, "reap_world_level_load_wait_seconds",
                          "From a streaming level's load request (a pawn in range) to the level "
                          "being visible, held-back and purge waits included.", out);
    {
        double sum = 0;

        for (uint32_t i = 0; i < s->recent_count; i++)
            sum += s->recent_waits[i];
        metric_header(out, "reap_world_level_load_wait_recent_seconds", "summary",
                      "Load waits of the last (at most 4096) streaming levels made visible: "
                      "exact quantiles.");
        strbuf_printf(out, "reap_world_level_load_wait_recent_seconds{quantile=\"0.5\"} %.6f\n"
                           "reap_world_level_load_wait_recent_seconds{quantile=\"0.99\"} %.6f\n"
                           "reap_world_level_load_wait_recent_seconds_sum %.6f\n"
                           "reap_world_level_load_wait_recent_seconds_count %u\n",
                      world_streaming_wait_quantile(s, 0.5), world_streaming_wait_quantile(s, 0.99),
                      sum, s->recent_count);
    }
    metric_u64(out, "reap_world_levels_pending_purge_max", "gauge",
               "The most streaming levels pending purge at once since the start.",
               s->pending_purge_max);
    metric_u64(out, "reap_world_level_loads_held_total", "counter",
               "Level loads held back while a level was pending purge "
               "(s.ForceGCAfterLevelStreamedOut).", s->loads_held);
    metric_u64(out, "reap_world_levels_collected_total", "counter",
               "Streamed-out levels a collection found unreachable.", s->levels_collected);
    metric_u64(out, "reap_world_levels_survived_total", "counter",
               "Streamed-out levels still alive after the collection that should have freed "
               "them.", s->levels_survived);
    metric_u64(out, "reap_world_level_verify_survivors_total", "counter",
               "Objects of streamed-out levels s.ForceVerifyLevelsGotRemovedByGC found alive.",
               s->verify_survivors);
}

/* The match cycle: travels, what the last one cost the frames, leaked worlds. */
static void admin_metrics_render_travel(engine *e, strbuf *out)
{
    const engine_travel *t = &e->travel;
    const engine_travel_frames *f = &e->last_travel_frames;
    uint32_t alive = 0;

    for (uint32_t i = 0; i < e->leaked_count; i++)
        alive += gc_weak_get_even_if_garbage(e->heap, e->leaked[i].world) != NULL;
    metric_header(out, "reap_travels_total", "counter",
                  "Server travels finished, by mode (hard: UE's LoadMap; seamless).");
    strbuf_printf(out, "reap_travels_total{mode=\"hard\"} %llu\n",
                  (unsigned long long)t->travels[ENGINE_TRAVEL_HARD]);
    strbuf_printf(out, "reap_travels_total{mode=\"seamless\"} %llu\n",
                  (unsigned long long)t->travels[ENGINE_TRAVEL_SEAMLESS]);
    metric_u64(out, "reap_travel_refused_total", "counter",
               "servertravel requests refused: an unknown map, or a travel under way.",
               t->refused);
    metric_u64(out, "reap_travel_in_progress", "gauge", "1 while a travel runs.",
               engine_travel_busy(t) ? 1 : 0);
    metric_f64(out, "reap_travel_last_seconds", "gauge",
               "The last travel's length, from telling the clients to the new map's opening.",
               t->last.seconds);
    metric_u64(out, "reap_travel_last_frames", "gauge", "Frames the last travel spanned.",
               f->frames);
    metric_f64(out, "reap_travel_last_longest_frame_seconds", "gauge",
               "The longest frame of the last travel.", f->longest_frame);
    metric_u64(out, "reap_travel_last_frames_over_budget", "gauge",
               "Frames of the last travel longer than the --tick-hz period.", f->over_budget);
    metric_u64(out, "reap_world_leaks_total", "counter",
               "Worlds a travel's leak check found alive after its collections "
               "(Engine.VerifyLoadMapWorldCleanup.Severity >= 1).", e->leaked_found);
    metric_u64(out, "reap_world_leaked_worlds", "gauge",
               "Leaked worlds still alive (renamed ..._Leaked, kept).", alive);
    metric_u64(out, "reap_game_instance_objects", "gauge",
               "Actors the game instance holds (lifetime = instance archetypes).",
               world_game_instance_count(&e->env));
}

/* The frame's cost by phase, and what replication sends. */
static void admin_metrics_render_frame(engine *e, strbuf *out)
{
    const net_driver_counters *nc = net_driver_counters_get(e->net);

    metric_header(out, "reap_frame_phase_seconds", "histogram",
                  "Work time of each phase of a frame (net, world, repl, gc).");
    for (int p = 0; p < ENGINE_PHASE_COUNT; p++) {
        char labels[32];
        snprintf(labels, sizeof labels, "phase=\"%s\"", engine_phase_names[p]);
        stats_histogram_write_series(&e->phase_seconds[p], "reap_frame_phase_seconds", labels,
                                     out);
    }
    metric_f64(out, "reap_tick_max_seconds", "gauge", "The longest frame since the start.",
               e->tick_seconds.max);
    metric_u64(out, "reap_net_bytes_sent_total", "counter",
               "Message bytes queued to clients (before ENet's own headers).", nc->bytes_out);
    metric_u64(out, "reap_net_packets_sent_total", "counter", "Messages queued to clients.",
               nc->packets_out);
    metric_u64(out, "reap_net_datagrams_sent_total", "counter",
               "UDP datagrams sent (ENet's acknowledgements, pings and resends included).",
               nc->datagrams_out);
    metric_u64(out, "reap_net_datagrams_received_total", "counter", "UDP datagrams received.",
               nc->datagrams_in);
    metric_u64(out, "reap_net_wire_bytes_sent_total", "counter",
               "UDP payload bytes sent, ENet's headers included.", nc->wire_bytes_out);
    metric_u64(out, "reap_net_saturated_total", "counter",
               "Connection-frames with more to send than net.MaxClientRate or ENet's window "
               "allowed (the rest waited).", nc->saturated);
    metric_u64(out, "reap_net_full_passes_deferred_total", "counter",
               "Connection-frames whose first relevancy pass (a joiner's) waited for the next "
               "frame: the frame's net.FullPassBudgetMs was spent.",
               nc->full_passes_deferred);
    metric_u64(out, "reap_net_connections_deferred_total", "counter",
               "Connection-frames that waited for the next frame, served first then: the "
               "frame's net.ReplicationFrameBudget was spent.", nc->connections_deferred);
    metric_u64(out, "reap_net_replication_frames_cut_total", "counter",
               "Frames whose net.ReplicationFrameBudget made any connection wait.",
               nc->frames_cut);
    metric_u64(out, "reap_net_actor_spawns_sent_total", "counter",
               "Spawn records sent: an actor became relevant to a connection.",
               nc->spawns_sent);
    metric_u64(out, "reap_net_actor_destroys_sent_total", "counter",
               "Destroys sent: an actor went, or is no longer relevant to a connection.",
               nc->destroys_sent);
    metric_u64(out, "reap_net_records_encoded_total", "counter",
               "Spawn and update records encoded, once per actor change whatever the number "
               "of connections that receive them.", nc->records_encoded);
    metric_u64(out, "reap_net_spawn_bytes_sent_total", "counter",
               "Bytes of ActorSpawn messages sent, with ENet's command header.",
               nc->spawn_bytes_sent);
    metric_u64(out, "reap_net_update_records_sent_total", "counter",
               "Position updates sent (update records in ActorUpdate messages).",
               nc->update_records_sent);
    metric_u64(out, "reap_net_update_bytes_sent_total", "counter",
               "Bytes of ActorUpdate messages sent, with ENet's command header.",
               nc->update_bytes_sent);
    metric_u64(out, "reap_net_replication_pairs", "gauge",
               "Actor-connection pairs after the last frame: actors relevant to or still held "
               "by each connection, summed.", nc->pairs);
    metric_u64(out, "reap_net_replication_pair_frames_total", "counter",
               "Actor-connection pairs summed over frames (over reap_frames_total: the pairs a "
               "frame handles).", nc->pair_frames);
    metric_u64(out, "reap_net_refused_inputs_total", "counter",
               "MoveInput messages not applied (not finite, too fast or over the rate).",
               nc->refused_inputs);
    metric_u64(out, "reap_net_rate_limited_total", "counter",
               "Requests refused with ERROR_CODE_RATE.", nc->rate_limited);
    metric_u64(out, "reap_net_refused_handshakes_total", "counter",
               "Connection handshakes refused or evicted: too many in flight.",
               nc->refused_handshakes);
    metric_u64(out, "reap_net_handshake_timeouts_total", "counter",
               "Connection handshakes reset for not finishing in time.", nc->handshake_timeouts);
    metric_u64(out, "reap_net_refused_fragments_total", "counter",
               "Fragments of packets larger than net.MaxMessageBytes dropped before reassembly.",
               nc->refused_fragments);
    metric_header(out, "reap_net_dropped_messages_total", "counter",
                  "Client messages the datagram filter dropped before decoding, by reason: "
                  "over a channel's rate, over net.MaxMessagesPerFrame, waiting behind a "
                  "dropped reliable one, from a connection being closed.");
    for (int r = 0; r < NET_DROP_REASONS; r++)
        metric_reason(out, "reap_net_dropped_messages_total",
                      net_drop_reason_name((net_drop_reason)r), nc->dropped[r]);
}
