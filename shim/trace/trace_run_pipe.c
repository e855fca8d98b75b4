/* Runs handed to a consumer thread: see trace_run_pipe.h. A ring of
 * buffers: the caller fills buf[head], the thread consumes buf[tail]. */
#include "trace_run_pipe.h"

#include <pthread.h>
#include <stdlib.h>

struct obs_run_pipe {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint8_t *buf[OBS_RUN_PIPE_BUFFERS];
    size_t len[OBS_RUN_PIPE_BUFFERS];
    unsigned head, tail, queued; /* queued: submitted, not yet consumed */
    int done;
    void (*consume)(void *arg, const uint8_t *run, size_t len);
    void *arg;
};

static void *pipe_main(void *arg)
{
    struct obs_run_pipe *p = arg;
    for (;;) {
        unsigned i;
        pthread_mutex_lock(&p->mu);
        while (p->queued == 0 && !p->done)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->queued == 0) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        i = p->tail;
        pthread_mutex_unlock(&p->mu);
        p->consume(p->arg, p->buf[i], p->len[i]);
        pthread_mutex_lock(&p->mu);
        p->tail = (p->tail + 1) % OBS_RUN_PIPE_BUFFERS;
        p->queued--;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

struct obs_run_pipe *obs_run_pipe_start(size_t run_bytes, void (*consume)(void *arg, const uint8_t *run, size_t len),
                                        void *arg)
{
    struct obs_run_pipe *p = calloc(1, sizeof *p);
    unsigned i;
    if (p == NULL)
        return NULL;
    p->consume = consume;
    p->arg = arg;
    p->buf[0] = malloc(OBS_RUN_PIPE_BUFFERS * run_bytes);
    if (p->buf[0] == NULL) {
        free(p);
        return NULL;
    }
    for (i = 1; i < OBS_RUN_PIPE_BUFFERS; i++)
        p->buf[i] = p->buf[0] + i * run_bytes;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->thread, NULL, pipe_main, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p->buf[0]);
        free(p);
        return NULL;
    }
    return p;
}

uint8_t *obs_run_pipe_buffer(struct obs_run_pipe *p)
{
    return p->buf[p->head];
}

uint8_t *obs_run_pipe_submit(struct obs_run_pipe *p, size_t len)
{
    uint8_t *next;
    pthread_mutex_lock(&p->mu);
    p->len[p->head] = len;
    p->head = (p->head + 1) % OBS_RUN_PIPE_BUFFERS;
    p->queued++;
    pthread_cond_broadcast(&p->cv);
    while (p->queued == OBS_RUN_PIPE_BUFFERS) /* buf[head] is still the thread's */
        pthread_cond_wait(&p->cv, &p->mu);
    next = p->buf[p->head];
    pthread_mutex_unlock(&p->mu);
    return next;
}

void obs_run_pipe_finish(struct obs_run_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    p->done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->buf[0]);
    free(p);
}
