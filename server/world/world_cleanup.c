/*
 * world_cleanup.c - UE UWorld::CleanupActors over a level's actor slots.
 *
 * Destroying an actor nulls its slot; the array keeps its length so that indices stay valid
 * until the engine has collected. After a collection this removes the null slots. It walks
 * from the end down to the first dynamic slot, counting a run of nulls and removing the whole
 * run with one move when it meets a live actor, so a level with k runs costs k moves rather
 * than one per null. Slots below first_dynamic (world settings and the default volume) are
 * never touched, and the live actors keep their order.
 */
#include "world.h"

#include <string.h>

static void world_remove_run(void **slots, uint32_t count, uint32_t at, uint32_t run)
{
    memmove(&slots[at], &slots[at + run], (size_t)(count - at - run) * sizeof *slots);
}

uint32_t world_compact_actor_slots(void **slots, uint32_t count, uint32_t first_dynamic)
{
    uint32_t run = 0;

    if (count <= first_dynamic)
        return count;
    for (uint32_t i = count; i-- > first_dynamic;) {
        if (slots[i] == NULL) {
            run++;
        } else if (run > 0) {
            world_remove_run(slots, count, i + 1, run);
            count -= run;
            run = 0;
        }
    }
    if (run > 0) {
        world_remove_run(slots, count, first_dynamic, run);
        count -= run;
    }
    return count;
}
