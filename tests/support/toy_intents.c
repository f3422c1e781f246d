/* toy_intents.c — the classifier suites' generated intent set (toy_intents.h). */
#include "tests/support/toy_intents.h"

#include <stdio.h>

#include "models/core/rng.h"

gyro_status toy_intents(gyro_example_set *s, int n, uint64_t seed, int classes)
{
    const char *play[] = {"播放", "我想听", "来一首", "放歌"};
    const char *stop[] = {"暂停", "停下", "别放了", "关掉"};
    const char *fill[] = {"", "吧", "一下", "好吗", "周杰伦的"};
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        char text[128];
        int k = (int)gyro_rng_below(&r, (uint32_t)(classes == 3 ? 3 : 2));
        const char *a = k == 1 ? stop[gyro_rng_below(&r, 4)] : play[gyro_rng_below(&r, 4)];
        snprintf(text, sizeof text, "%s%s%s", fill[gyro_rng_below(&r, 5)], a,
                 k == 2 ? "天气怎么样" : fill[gyro_rng_below(&r, 5)]);
        const char *label = k == 0 ? "music.play" : k == 1 ? "music.pause" : "music.play+weather.query";
        gyro_status st = gyro_example_set_add(s, text, label, (uint64_t)i + 1);
        if (st) return st;
    }
    return GYRO_OK;
}
