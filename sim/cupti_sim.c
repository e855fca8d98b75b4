/* The simulated libcupti.so.13: CUPTI's activity API over the simulated CUDA
 * runtime and driver, for OBS_GPU_TIME=cupti's tests. NVIDIA's own libcupti
 * cannot run on the simulated driver (docs/architecture.md, "CUPTI on the
 * simulated driver"); this one follows its ABI (shim/abi/cupti_abi.h, the
 * record layouts of the toolkit's cupti_activity.h) and its documented
 * behaviour:
 *
 *   - one subscriber per process: a second cuptiSubscribe(_v2) fails with
 *     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and names the first
 *     (OBS_SIM_CUPTI_REFUSE=1 refuses every subscriber, as under nsys);
 *   - activity kinds RUNTIME, DRIVER (whole, or per callback id with
 *     cuptiActivityEnableRuntimeApi / EnableDriverApi), CONCURRENT_KERNEL
 *     (and KERNEL), MEMCPY, MEMSET: records in the client's buffers
 *     (buffer-requested callback), delivered full by a worker thread
 *     (buffer-completed callback), all of them by cuptiActivityFlushAll,
 *     which waits until they have been delivered;
 *   - every call into the runtime or driver gets a correlation id; its API
 *     record carries the call's start and end from the timestamp callback
 *     (cuptiActivityRegisterTimestampCallback; CLOCK_REALTIME without one,
 *     as CUPTI on Linux) and the thread id of cuptiSetThreadIdType; device
 *     records carry their call's correlation id and the operation's virtual
 *     start and end (sim/sim_clock.h, cost_model.h) on that clock:
 *     base + virtual time, base = the clock at attach - the library's
 *     virtual time then;
 *   - records that find no buffer are dropped and counted
 *     (cuptiActivityGetNumDroppedRecords).
 *
 * It sees the simulators through their tool port (sim_tool.h), attached
 * when an activity kind (or an API's records) is first enabled: its clock
 * base is taken then, on the timestamp callback registered by then. OBS_SIM_LOG gets a line per
 * CUPTI call (kind "other") and one per attach:
 *     obssim_tool_attach<TAB>other<TAB>runtime|driver<TAB>-<TAB>BASE_NS<TAB>0
 * OBS_SIM_CUPTI_BUFFER_RECORDS=N: a buffer is full after N records (small
 * buffers without a small client). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "abi/cupti_abi.h"
#include "sim_log.h"
#include "sim_tool.h"

#define CUPTI_EXPORT __attribute__((visibility("default")))
#define CUPTI_SIM_VERSION 130001u  /* CUPTI_API_VERSION of CUDA 13.0 */
#define MAX_CBID 1024u
#define QUEUE_FIRST 256u           /* buffers waiting for the worker: the ring's first size (it grows) */

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t worker_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t delivered = PTHREAD_COND_INITIALIZER;
static pthread_cond_t queue_taken = PTHREAD_COND_INITIALIZER;

struct obs_CUpti_Subscriber_st {
    char name[64];
};
static struct obs_CUpti_Subscriber_st the_subscriber;
static bool subscribed;
static bool refuse_all;            /* OBS_SIM_CUPTI_REFUSE=1 */
static unsigned long buffer_records_max; /* OBS_SIM_CUPTI_BUFFER_RECORDS */

static obs_CUpti_BuffersCallbackRequestFunc buffer_requested;
static obs_CUpti_BuffersCallbackCompleteFunc buffer_completed;
/* Read by the tool port on the app's threads without the lock. */
static _Atomic(obs_CUpti_TimestampCallbackFunc) timestamp_fn;
static _Atomic int thread_id_type;
static uint32_t flush_period_ms;

/* What is enabled (read by the tool port without the lock). */
static _Atomic bool kind_on[16];
static _Atomic bool api_subset_on; /* some callback ids enabled one by one */
static _Atomic uint8_t runtime_cbid_on[MAX_CBID], driver_cbid_on[MAX_CBID];
static bool attached[2];
static uint64_t clock_base[2]; /* host clock - virtual time, per domain */
static _Atomic uint32_t next_correlation;

/* The buffer being filled, and the full ones the worker delivers. */
struct buffer {
    uint8_t *data;
    size_t size, used, records, max_records;
};
static struct buffer current;
static struct buffer *queue; /* a ring of queue_cap: full buffers in order, never dropped */
static unsigned queue_head, queue_count, queue_cap;
static size_t dropped;
static bool worker_started, worker_busy;
static unsigned long flush_requests, flushes_done;

/* Kept per thread and per process, as CUPTI keeps them (a system call per
 * API record would be the simulator's cost, not CUPTI's). */
static __thread uint32_t cached_tid;
static _Atomic uint32_t cached_pid;

/* ---- start-up, fork, the log ------------------------------------------------------ */

static void after_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&worker_wake, NULL);
    pthread_cond_init(&delivered, NULL);
    pthread_cond_init(&queue_taken, NULL);
    /* The parent's records are the parent's; no worker runs here, and the
     * parent's session does not go on in the child. */
    for (int k = 0; k < 16; k++)
        atomic_store(&kind_on[k], false);
    atomic_store(&api_subset_on, false);
    memset(&current, 0, sizeof current);
    atomic_store(&cached_pid, 0);
    cached_tid = 0; /* the forking thread's: the child's only thread has its own id */
    queue_head = queue_count = 0;
    worker_started = worker_busy = false;
    flush_requests = flushes_done = 0;
}

static void start(void)
{
    const char *refuse = getenv("OBS_SIM_CUPTI_REFUSE");
    const char *records = getenv("OBS_SIM_CUPTI_BUFFER_RECORDS");
    sim_log_start("obsshim-sim: simulated CUPTI (activity records on the simulators' virtual clock)\n");
    refuse_all = refuse != NULL && strcmp(refuse, "1") == 0;
    buffer_records_max = records != NULL ? strtoul(records, NULL, 10) : 0;
    pthread_atfork(NULL, NULL, after_fork_child);
}

static obs_CUptiResult logged(const char *api, obs_CUptiResult status)
{
    sim_log_line(api, "other", NULL, 0, 0, -1, status);
    return status;
}

static uint64_t now(void)
{
    struct timespec ts;
    obs_CUpti_TimestampCallbackFunc fn = atomic_load(&timestamp_fn);
    if (fn != NULL)
        return fn();
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t thread_id(void)
{
    if (atomic_load_explicit(&thread_id_type, memory_order_relaxed) == OBS_CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
        if (cached_tid == 0)
            cached_tid = (uint32_t)syscall(SYS_gettid);
        return cached_tid;
    }
    return (uint32_t)pthread_self();
}

static uint32_t process_id(void)
{
    uint32_t pid = atomic_load_explicit(&cached_pid, memory_order_relaxed);
    if (pid == 0) {
        pid = (uint32_t)getpid();
        atomic_store_explicit(&cached_pid, pid, memory_order_relaxed);
    }
    return pid;
}

/* ---- buffers and the worker ------------------------------------------------------- */

/* Under lock: hand the current buffer to the worker (even empty: the client
 * gets back every buffer it gave). */
/* Under lock: room for one more buffer in the ring. CUPTI keeps every
 * buffer the client gave until it is delivered, however far the worker
 * lags (a starved worker on a loaded machine): the ring grows, in order. */
static bool queue_room_locked(void)
{
    struct buffer *grown;
    unsigned cap, i;
    if (queue_count < queue_cap)
        return true;
    cap = queue_cap ? 2 * queue_cap : QUEUE_FIRST;
    grown = malloc(cap * sizeof *grown);
    if (grown == NULL)
        return false;
    for (i = 0; i < queue_count; i++)
        grown[i] = queue[(queue_head + i) % queue_cap];
    free(queue);
    queue = grown;
    queue_cap = cap;
    queue_head = 0;
    return true;
}

static void retire_current_locked(void)
{
    if (current.data == NULL)
        return;
    /* no memory for a larger ring: wait for the worker to take one (with
     * no worker, the buffer's records are dropped and counted) */
    while (!queue_room_locked()) {
        if (!worker_started) {
            dropped += current.records;
            memset(&current, 0, sizeof current);
            return;
        }
        pthread_cond_wait(&queue_taken, &lock);
    }
    queue[(queue_head + queue_count) % queue_cap] = current;
    queue_count++;
    memset(&current, 0, sizeof current);
    pthread_cond_signal(&worker_wake);
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (queue_count == 0 && flushes_done == flush_requests)
            pthread_cond_wait(&worker_wake, &lock);
        if (queue_count > 0) {
            struct buffer b = queue[queue_head];
            obs_CUpti_BuffersCallbackCompleteFunc done = buffer_completed;
            queue_head = (queue_head + 1) % queue_cap;
            queue_count--;
            pthread_cond_broadcast(&queue_taken);
            worker_busy = true;
            pthread_mutex_unlock(&lock);
            if (done != NULL)
                done(NULL, 0, b.data, b.size, b.used);
            pthread_mutex_lock(&lock);
            worker_busy = false;
            continue;
        }
        /* A flush asked for and everything before it delivered. */
        flushes_done = flush_requests;
        pthread_cond_broadcast(&delivered);
    }
    return NULL;
}

/* Under lock. */
static void start_worker_locked(void)
{
    pthread_t t;
    pthread_attr_t attr;
    if (worker_started)
        return;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, worker, NULL) == 0)
        worker_started = true;
    pthread_attr_destroy(&attr);
}

/* Under lock: room for a record of len bytes (asking the client for a
 * buffer when needed); NULL: dropped. */
static uint8_t *reserve_locked(size_t len)
{
    if (current.data != NULL &&
        (current.used + len > current.size || (current.max_records && current.records >= current.max_records) ||
         (buffer_records_max && current.records >= buffer_records_max)))
        retire_current_locked();
    if (current.data == NULL && buffer_requested != NULL) {
        uint8_t *data = NULL;
        size_t size = 0, max_records = 0;
        buffer_requested(&data, &size, &max_records);
        if (data != NULL && size >= len) {
            current.data = data;
            current.size = size;
            current.max_records = max_records;
        }
    }
    if (current.data == NULL || current.used + len > current.size) {
        dropped++;
        return NULL;
    }
    current.records++;
    current.used += len;
    return current.data + current.used - len;
}

static void append(const void *record, size_t len)
{
    uint8_t *to;
    pthread_mutex_lock(&lock);
    if ((to = reserve_locked(len)) != NULL)
        memcpy(to, record, len);
    pthread_mutex_unlock(&lock);
}

/* ---- the tool port ------------------------------------------------------------------- */

static bool session_on(void)
{
    int k;
    if (atomic_load_explicit(&api_subset_on, memory_order_relaxed))
        return true;
    for (k = 0; k < 16; k++)
        if (atomic_load_explicit(&kind_on[k], memory_order_relaxed))
            return true;
    return false;
}

static const struct {
    const char *name;
    uint32_t cbid;
} runtime_cbids[] = {
#define RT_ROW(api, cupti_name, value) {#api, value},
    OBS_CUPTI_RUNTIME_CBIDS(RT_ROW)
#undef RT_ROW
}, driver_cbids[] = {
#define DRV_ROW(api, value) {#api, value},
    OBS_CUPTI_DRIVER_CBIDS(DRV_ROW)
#undef DRV_ROW
};

/* The callback id of an entry point (0: not one this simulator knows). The
 * simulators pass string literals: a small cache keyed by the pointer. */
static uint32_t cbid_of(enum sim_tool_domain domain, const char *api)
{
    static __thread struct {
        const char *api;
        uint32_t cbid;
    } cache[64];
    unsigned slot = (unsigned)(((uintptr_t)api >> 3) % 64);
    size_t i, n;
    uint32_t cbid = 0;

    if (cache[slot].api == api)
        return cache[slot].cbid;
    if (domain == SIM_TOOL_RUNTIME) {
        for (i = 0, n = sizeof runtime_cbids / sizeof runtime_cbids[0]; i < n; i++)
            if (strcmp(runtime_cbids[i].name, api) == 0)
                cbid = runtime_cbids[i].cbid;
    } else {
        for (i = 0, n = sizeof driver_cbids / sizeof driver_cbids[0]; i < n; i++)
            if (strcmp(driver_cbids[i].name, api) == 0)
                cbid = driver_cbids[i].cbid;
    }
    cache[slot].api = api;
    cache[slot].cbid = cbid;
    return cbid;
}

static void port_attached(enum sim_tool_domain domain, uint64_t virtual_now)
{
    clock_base[domain] = now() - virtual_now;
    sim_log_line("obssim_tool_attach", "other", domain == SIM_TOOL_RUNTIME ? "runtime" : "driver", 0, 0,
                 (long long)clock_base[domain], 0);
}

static void port_api_begin(enum sim_tool_domain domain, struct sim_tool_call *call)
{
    (void)domain;
    if (!session_on())
        return;
    call->correlation = atomic_fetch_add(&next_correlation, 1) + 1;
    call->start = now();
}

static void port_api_end(enum sim_tool_domain domain, const char *api, const struct sim_tool_call *call,
                         int status)
{
    obs_CUpti_ActivityAPI r;
    uint32_t cbid = cbid_of(domain, api);
    bool wanted = domain == SIM_TOOL_RUNTIME
                      ? kind_on[OBS_CUPTI_ACTIVITY_KIND_RUNTIME] || (cbid < MAX_CBID && runtime_cbid_on[cbid])
                      : kind_on[OBS_CUPTI_ACTIVITY_KIND_DRIVER] || (cbid < MAX_CBID && driver_cbid_on[cbid]);
    if (!wanted)
        return;
    memset(&r, 0, sizeof r);
    r.kind = domain == SIM_TOOL_RUNTIME ? OBS_CUPTI_ACTIVITY_KIND_RUNTIME : OBS_CUPTI_ACTIVITY_KIND_DRIVER;
    r.cbid = cbid;
    r.start = call->start;
    r.end = now();
    r.processId = process_id();
    r.threadId = thread_id();
    r.correlationId = call->correlation;
    r.returnValue = (uint32_t)status;
    append(&r, sizeof r);
}

static void port_device_op(enum sim_tool_domain domain, const struct sim_tool_op *op)
{
    uint64_t base = clock_base[domain];
    switch (op->kind) {
    case SIM_TOOL_KERNEL: {
        obs_CUpti_ActivityKernel10 k;
        if (!kind_on[OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] && !kind_on[OBS_CUPTI_ACTIVITY_KIND_KERNEL])
            return;
        memset(&k, 0, sizeof k);
        k.kind = kind_on[OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ? OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                                                                   : OBS_CUPTI_ACTIVITY_KIND_KERNEL;
        k.start = base + op->start_ns;
        k.end = base + op->end_ns;
        k.completed = k.end;
        k.streamId = (uint32_t)(op->stream >> 4);
        k.gridX = (int32_t)op->grid[0], k.gridY = (int32_t)op->grid[1], k.gridZ = (int32_t)op->grid[2];
        k.blockX = (int32_t)op->block[0], k.blockY = (int32_t)op->block[1], k.blockZ = (int32_t)op->block[2];
        k.correlationId = op->correlation;
        k.name = op->name;
        k.graphId = op->in_graph ? 1 : 0;
        append(&k, sizeof k);
        break;
    }
    case SIM_TOOL_MEMCPY: {
        obs_CUpti_ActivityMemcpy6 c;
        if (!kind_on[OBS_CUPTI_ACTIVITY_KIND_MEMCPY])
            return;
        memset(&c, 0, sizeof c);
        c.kind = OBS_CUPTI_ACTIVITY_KIND_MEMCPY;
        c.copyKind = (uint8_t)op->copy_kind;
        c.bytes = op->bytes;
        c.start = base + op->start_ns;
        c.end = base + op->end_ns;
        c.streamId = (uint32_t)(op->stream >> 4);
        c.correlationId = op->correlation;
        c.runtimeCorrelationId = domain == SIM_TOOL_RUNTIME ? op->correlation : 0;
        c.graphId = op->in_graph ? 1 : 0;
        c.copyCount = 1;
        append(&c, sizeof c);
        break;
    }
    case SIM_TOOL_MEMSET: {
        obs_CUpti_ActivityMemset4 m;
        if (!kind_on[OBS_CUPTI_ACTIVITY_KIND_MEMSET])
            return;
        memset(&m, 0, sizeof m);
        m.kind = OBS_CUPTI_ACTIVITY_KIND_MEMSET;
        m.bytes = op->bytes;
        m.start = base + op->start_ns;
        m.end = base + op->end_ns;
        m.streamId = (uint32_t)(op->stream >> 4);
        m.correlationId = op->correlation;
        m.graphId = op->in_graph ? 1 : 0;
        append(&m, sizeof m);
        break;
    }
    }
}

static const struct sim_tool_port port = {port_attached, port_api_begin, port_api_end, port_device_op};

/* Attach to whichever simulated library is loaded and not attached yet. */
static void attach_libraries(void)
{
    static const struct {
        const char *soname, *symbol;
    } libs[2] = {{"libcudart.so.13", "obssim_cudart_tool_attach"}, {"libcuda.so.1", "obssim_cudrv_tool_attach"}};
    int d;
    for (d = 0; d < 2; d++) {
        void *h;
        sim_tool_attach_fn fn;
        if (attached[d] || (h = dlopen(libs[d].soname, RTLD_NOLOAD | RTLD_LAZY)) == NULL)
            continue;
        fn = (sim_tool_attach_fn)dlsym(h, libs[d].symbol);
        if (fn != NULL) {
            fn(&port);
            attached[d] = true;
        }
        dlclose(h);
    }
}

/* ---- entry points -------------------------------------------------------------------- */

CUPTI_EXPORT obs_CUptiResult cuptiGetVersion(uint32_t *version)
{
    pthread_once(&start_once, start);
    if (version == NULL)
        return logged("cuptiGetVersion", OBS_CUPTI_ERROR_INVALID_PARAMETER);
    *version = CUPTI_SIM_VERSION;
    return logged("cuptiGetVersion", OBS_CUPTI_SUCCESS);
}

CUPTI_EXPORT obs_CUptiResult cuptiGetResultString(obs_CUptiResult result, const char **str)
{
    if (str == NULL)
        return OBS_CUPTI_ERROR_INVALID_PARAMETER;
    switch (result) {
    case OBS_CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case OBS_CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case OBS_CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION"; break;
    case OBS_CUPTI_ERROR_MAX_LIMIT_REACHED: *str = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
    case OBS_CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case OBS_CUPTI_ERROR_INVALID_KIND: *str = "CUPTI_ERROR_INVALID_KIND"; break;
    case OBS_CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    case OBS_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; return OBS_CUPTI_ERROR_INVALID_PARAMETER;
    }
    return OBS_CUPTI_SUCCESS;
}

static obs_CUptiResult subscribe(const char *api, obs_CUpti_SubscriberHandle *subscriber, const char *name,
                                 char *old_name, size_t old_size)
{
    obs_CUptiResult st = OBS_CUPTI_SUCCESS;
    pthread_once(&start_once, start);
    if (subscriber == NULL)
        return logged(api, OBS_CUPTI_ERROR_INVALID_PARAMETER);
    pthread_mutex_lock(&lock);
    if (refuse_all || subscribed) {
        if (old_name != NULL && old_size > 0)
            snprintf(old_name, old_size, "%s",
                     refuse_all ? "Nsight Systems (simulated: OBS_SIM_CUPTI_REFUSE=1)" : the_subscriber.name);
        *subscriber = NULL;
        st = OBS_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    } else {
        subscribed = true;
        snprintf(the_subscriber.name, sizeof the_subscriber.name, "CUPTI for %s", name ? name : "(unnamed)");
        *subscriber = &the_subscriber;
    }
    pthread_mutex_unlock(&lock);
    return logged(api, st);
}

CUPTI_EXPORT obs_CUptiResult cuptiSubscribe(obs_CUpti_SubscriberHandle *subscriber, obs_CUpti_CallbackFunc callback,
                                            void *userdata)
{
    (void)callback, (void)userdata;
    return subscribe("cuptiSubscribe", subscriber, NULL, NULL, 0);
}

CUPTI_EXPORT obs_CUptiResult cuptiSubscribe_v2(obs_CUpti_SubscriberHandle *subscriber,
                                               obs_CUpti_CallbackFunc callback, void *userdata,
                                               obs_CUpti_SubscriberParams *params)
{
    (void)callback, (void)userdata;
    if (params != NULL && params->structSize < OBS_CUPTI_SUBSCRIBER_PARAMS_SIZE)
        return logged("cuptiSubscribe_v2", OBS_CUPTI_ERROR_INVALID_PARAMETER);
    return subscribe("cuptiSubscribe_v2", subscriber, params ? params->subscriberName : NULL,
                     params ? params->oldSubscriberName : NULL, params ? params->oldSubscriberSize : 0);
}

CUPTI_EXPORT obs_CUptiResult cuptiUnsubscribe(obs_CUpti_SubscriberHandle subscriber)
{
    obs_CUptiResult st = OBS_CUPTI_SUCCESS;
    pthread_once(&start_once, start);
    pthread_mutex_lock(&lock);
    if (subscriber != &the_subscriber || !subscribed)
        st = OBS_CUPTI_ERROR_INVALID_PARAMETER;
    else
        subscribed = false;
    pthread_mutex_unlock(&lock);
    return logged("cuptiUnsubscribe", st);
}

static obs_CUptiResult set_kind(const char *api, obs_CUpti_ActivityKind kind, bool on)
{
    pthread_once(&start_once, start);
    switch (kind) {
    case OBS_CUPTI_ACTIVITY_KIND_MEMCPY:
    case OBS_CUPTI_ACTIVITY_KIND_MEMSET:
    case OBS_CUPTI_ACTIVITY_KIND_KERNEL:
    case OBS_CUPTI_ACTIVITY_KIND_DRIVER:
    case OBS_CUPTI_ACTIVITY_KIND_RUNTIME:
    case OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        break;
    default:
        return logged(api, OBS_CUPTI_ERROR_NOT_SUPPORTED);
    }
    pthread_mutex_lock(&lock);
    kind_on[kind] = on;
    if (on)
        start_worker_locked();
    pthread_mutex_unlock(&lock);
    if (on)
        attach_libraries();
    return logged(api, OBS_CUPTI_SUCCESS);
}

CUPTI_EXPORT obs_CUptiResult cuptiActivityEnable(obs_CUpti_ActivityKind kind)
{
    return set_kind("cuptiActivityEnable", kind, true);
}

CUPTI_EXPORT obs_CUptiResult cuptiActivityDisable(obs_CUpti_ActivityKind kind)
{
    return set_kind("cuptiActivityDisable", kind, false);
}

static obs_CUptiResult set_cbid(const char *api, _Atomic uint8_t *table, obs_CUpti_CallbackId cbid, uint8_t on)
{
    pthread_once(&start_once, start);
    if (cbid >= MAX_CBID)
        return logged(api, OBS_CUPTI_ERROR_INVALID_PARAMETER);
    pthread_mutex_lock(&lock);
    table[cbid] = on != 0;
    if (on)
        start_worker_locked();
    pthread_mutex_unlock(&lock);
    if (on)
        attach_libraries();
    return logged(api, OBS_CUPTI_SUCCESS);
}

CUPTI_EXPORT obs_CUptiResult cuptiActivityEnableRuntimeApi(obs_CUpti_CallbackId cbid, uint8_t enable)
{
    obs_CUptiResult st = set_cbid("cuptiActivityEnableRuntimeApi", runtime_cbid_on, cbid, enable);
    if (st == OBS_CUPTI_SUCCESS && enable)
        atomic_store(&api_subset_on, true);
    return st;
}

CUPTI_EXPORT obs_CUptiResult cuptiActivityEnableDriverApi(obs_CUpti_CallbackId cbid, uint8_t enable)
{
    obs_CUptiResult st = set_cbid("cuptiActivityEnableDriverApi", driver_cbid_on, cbid, enable);
    if (st == OBS_CUPTI_SUCCESS && enable)
        atomic_store(&api_subset_on, true);
    return st;
}

CUPTI_EXPORT obs_CUptiResult cuptiActivityRegisterCallbacks(obs_CUpti_BuffersCallbackRequestFunc requested,
                                                            obs_CUpti_BuffersCallbackCompleteFunc completed)
{
    pthread_once(&start_once, start);
    if (requested == NULL || completed == NULL)
        return logged("cuptiActivityRegisterCallbacks", OBS_CUPTI_ERROR_INVALID_PARAMETER);
    pthread_mutex_lock(&lock);
    buffer_requested = requested;
    buffer_completed = completed;
    pthread_mutex_unlock(&lock);
    return logged("cuptiActivityRegisterCallbacks", OBS_CUPTI_SUCCESS);
}

CUPTI_EXPORT obs_CUptiResult cuptiActivityRegisterTimestampCallback(obs_CUpti_TimestampCallbackFunc func)
{
    pthread_once(&start_once, start);
    if (func == NULL)
        return logged("cuptiActivityRegisterTimestampCallback", OBS_CUPTI_ERROR_INVALID_PARAMETER);
    atomic_store(&timestamp_fn, func);
    return logged("cuptiActivityRegisterTimestampCallback", OBS_CUPTI_SUCCESS);
}

CUPTI_EXPORT obs_CUptiResult cuptiSetThreadIdType(obs_CUpti_ActivityThreadIdType type)
{
    pthread_once(&start_once, start);
    if (type != OBS_CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != OBS_CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return logged("cuptiSetThreadIdType", OBS_CUPTI_ERROR_NOT_SUPPORTED);
    atomic_store(&thread_id_type, type);
    return logged("cuptiSetThreadIdType", OBS_CUPTI_SUCCESS);
}

/* Every buffer, the one being filled included, delivered before returning
 * (on the worker thread; buffers keep their order). */
CUPTI_EXPORT obs_CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    unsigned long ticket;
    (void)flag; /* every simulated record is complete when it is written */
    pthread_once(&start_once, start);
    pthread_mutex_lock(&lock);
    if (buffer_completed == NULL) {
        pthread_mutex_unlock(&lock);
        return logged("cuptiActivityFlushAll", OBS_CUPTI_ERROR_INVALID_OPERATION);
    }
    start_worker_locked();
    if (!worker_started) {
        pthread_mutex_unlock(&lock);
        return logged("cuptiActivityFlushAll", OBS_CUPTI_ERROR_UNKNOWN);
    }
    if (current.data != NULL && current.used > 0)
        retire_current_locked();
    ticket = ++flush_requests;
    pthread_cond_signal(&worker_wake);
    while (flushes_done < ticket)
        pthread_cond_wait(&delivered, &lock);
    pthread_mutex_unlock(&lock);
    return logged("cuptiActivityFlushAll", OBS_CUPTI_SUCCESS);
}

CUPTI_EXPORT obs_CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    pthread_once(&start_once, start);
    flush_period_ms = ms; /* full buffers go to the worker at once anyway */
    return logged("cuptiActivityFlushPeriod", OBS_CUPTI_SUCCESS);
}

static size_t record_size(obs_CUpti_ActivityKind kind)
{
    switch (kind) {
    case OBS_CUPTI_ACTIVITY_KIND_RUNTIME:
    case OBS_CUPTI_ACTIVITY_KIND_DRIVER:
        return sizeof(obs_CUpti_ActivityAPI);
    case OBS_CUPTI_ACTIVITY_KIND_KERNEL:
    case OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(obs_CUpti_ActivityKernel10);
    case OBS_CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(obs_CUpti_ActivityMemcpy6);
    case OBS_CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(obs_CUpti_ActivityMemset4);
    default:
        return 0;
    }
}

/* Not logged: a client calls it once per record. */
CUPTI_EXPORT obs_CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, obs_CUpti_Activity **record)
{
    size_t at, len;
    if (buffer == NULL || record == NULL)
        return OBS_CUPTI_ERROR_INVALID_PARAMETER;
    if (*record == NULL) {
        at = 0;
    } else {
        obs_CUpti_ActivityKind kind;
        memcpy(&kind, *record, sizeof kind);
        len = record_size(kind);
        if (len == 0)
            return OBS_CUPTI_ERROR_INVALID_KIND;
        at = (size_t)((uint8_t *)*record - buffer) + len;
    }
    if (at + sizeof(obs_CUpti_Activity) > valid) {
        return OBS_CUPTI_ERROR_MAX_LIMIT_REACHED;
    } else {
        obs_CUpti_ActivityKind kind;
        memcpy(&kind, buffer + at, sizeof kind);
        len = record_size(kind);
        if (len == 0 || at + len > valid)
            return len == 0 ? OBS_CUPTI_ERROR_INVALID_KIND : OBS_CUPTI_ERROR_MAX_LIMIT_REACHED;
    }
    *record = (obs_CUpti_Activity *)(void *)(buffer + at);
    return OBS_CUPTI_SUCCESS;
}

CUPTI_EXPORT obs_CUptiResult cuptiActivityGetNumDroppedRecords(void *context, uint32_t streamId, size_t *count)
{
    (void)context, (void)streamId;
    if (count == NULL)
        return OBS_CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    *count = dropped;
    dropped = 0;
    pthread_mutex_unlock(&lock);
    return OBS_CUPTI_SUCCESS;
}
