/* Kernel names: see kernel_names.h. Memory here is malloc'ed: names are
 * interned at load time or on a launch's first sight of a pointer, never
 * per call. */
#include "kernel_names.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "output.h"
#include "runtimes/real_symbols.h"
#include "trace/trace.h"

OBS_HIDDEN OBS_HOT_DATA struct obs_ptrmap obs_names_by_host_fun;
OBS_HIDDEN OBS_HOT_DATA struct obs_ptrmap obs_names_by_handle;

#define NAMES_PER_BLOCK 1024u
#define NAME_BLOCKS 4096u /* up to 4M distinct names */

struct name_entry {
    char *mangled;
    char *demangled;      /* NULL: not demangled (yet) */
    bool demangled_later; /* written without its demangled form, which may come (under the output lock) */
};

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct name_entry *blocks[NAME_BLOCKS];
static _Atomic uint32_t name_count; /* ids 1..name_count are valid */
static uint32_t names_written;      /* under the output lock */
static uint32_t demangle_later;     /* entries with demangled_later set (under the output lock) */

/* Name text -> id, open addressing (under names_lock only). */
static uint32_t *by_text;
static size_t by_text_mask;

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

static struct name_entry *entry_of(uint32_t id)
{
    return &blocks[(id - 1) / NAMES_PER_BLOCK][(id - 1) % NAMES_PER_BLOCK];
}

static size_t text_hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static _Atomic(cxa_demangle_fn) demangler;

/* The C++ runtime's demangler, if the process has one loaded (the shim is
 * C and links none). Looked up with the C library's dlsym (obs_real_dlsym),
 * so never while holding one of our locks: dlsym takes the loader's lock,
 * which a thread registering kernels from a library constructor already
 * holds. */
static cxa_demangle_fn find_demangler(void)
{
    cxa_demangle_fn fn = atomic_load(&demangler);
    if (fn == NULL) {
        fn = (cxa_demangle_fn)obs_real_dlsym(RTLD_DEFAULT, "__cxa_demangle");
        if (fn != NULL)
            atomic_store(&demangler, fn);
    }
    return fn;
}

/* Demangled text (malloc'ed) or NULL; fn may be NULL. */
static char *demangle_with(cxa_demangle_fn fn, const char *mangled)
{
    int status = -1;
    char *out;
    if (fn == NULL || strncmp(mangled, "_Z", 2) != 0)
        return NULL;
    out = fn(mangled, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

void obs_kernel_names_init(void)
{
    find_demangler();
}

static int by_text_grow(void)
{
    size_t cap = by_text ? (by_text_mask + 1) * 2 : 1024, i;
    uint32_t *grown = calloc(cap, sizeof *grown);
    uint32_t id, count = atomic_load_explicit(&name_count, memory_order_relaxed);
    if (grown == NULL)
        return -1;
    for (id = 1; id <= count; id++) {
        for (i = text_hash(entry_of(id)->mangled) & (cap - 1); grown[i] != 0; i = (i + 1) & (cap - 1))
            ;
        grown[i] = id;
    }
    free(by_text);
    by_text = grown;
    by_text_mask = cap - 1;
    return 0;
}

/* Under names_lock. Takes demangled (malloc'ed or NULL). */
static uint32_t intern_locked(const char *mangled, char *demangled)
{
    uint32_t count = atomic_load_explicit(&name_count, memory_order_relaxed), id;
    struct name_entry *e;
    size_t i;

    if (by_text != NULL)
        for (i = text_hash(mangled) & by_text_mask; by_text[i] != 0; i = (i + 1) & by_text_mask)
            if (strcmp(entry_of(by_text[i])->mangled, mangled) == 0) {
                free(demangled);
                return by_text[i];
            }
    id = count + 1;
    if (count + 1 >= NAMES_PER_BLOCK * NAME_BLOCKS ||
        ((by_text == NULL || (size_t)(count + 1) * 2 > by_text_mask + 1) && by_text_grow() != 0) ||
        (blocks[(id - 1) / NAMES_PER_BLOCK] == NULL &&
         (blocks[(id - 1) / NAMES_PER_BLOCK] = calloc(NAMES_PER_BLOCK, sizeof(struct name_entry))) == NULL)) {
        free(demangled);
        return 0;
    }
    e = entry_of(id);
    e->mangled = strdup(mangled);
    if (e->mangled == NULL) {
        free(demangled);
        return 0;
    }
    e->demangled = demangled;
    for (i = text_hash(mangled) & by_text_mask; by_text[i] != 0; i = (i + 1) & by_text_mask)
        ;
    by_text[i] = id;
    /* Publish: the entry is complete before a writer can see the id. */
    atomic_store_explicit(&name_count, id, memory_order_release);
    return id;
}

/* A name just interned goes into the trace at once (when the file is open;
 * otherwise when it is created): after SIGKILL the trace names every
 * kernel its records use. Outside names_lock. */
static void names_publish(void)
{
    obs_out_lock_acquire(&obs_out.lock, (uint32_t)syscall(SYS_gettid)); /* the lock's owner id, as the recorder's */
    if (obs_out.status == OBS_OUTPUT_OPEN)
        obs_kernel_names_write_pending_locked(false);
    obs_out_lock_release(&obs_out.lock);
}

uint32_t obs_kernel_name_intern(const char *mangled)
{
    char *demangled;
    uint32_t id;
    if (mangled == NULL || mangled[0] == '\0')
        return 0;
    demangled = demangle_with(find_demangler(), mangled);
    pthread_mutex_lock(&names_lock);
    id = intern_locked(mangled, demangled);
    pthread_mutex_unlock(&names_lock);
    OBS_DEBUG_LOG(RECORD, 3, "kernel name id=%u %s", id, mangled);
    names_publish();
    return id;
}

/* Intern name and map key to it in map. */
static uint32_t intern_and_map(struct obs_ptrmap *map, const void *key, const char *name)
{
    char *demangled = demangle_with(find_demangler(), name);
    uint32_t id;
    pthread_mutex_lock(&names_lock);
    id = intern_locked(name, demangled);
    if (id != 0)
        obs_ptrmap_put(map, (uintptr_t)key, id);
    pthread_mutex_unlock(&names_lock);
    names_publish();
    return id;
}

void obs_kernel_names_register(const void *host_fun, const char *device_name)
{
    if (host_fun != NULL && device_name != NULL && device_name[0] != '\0')
        intern_and_map(&obs_names_by_host_fun, host_fun, device_name);
}

void obs_kernel_names_register_handle(const void *handle, const char *name)
{
    if (handle != NULL && name != NULL && name[0] != '\0')
        intern_and_map(&obs_names_by_handle, handle, name);
}

/* The name for a pointer no registration named: for a host function, the
 * symbol dladdr finds (the host stub carries the kernel's mangled name);
 * else its address. Outside our locks (dladdr takes the loader's lock). */
static void fallback_text(const void *ptr, bool is_handle, char *text, size_t len)
{
    Dl_info info;
    if (!is_handle && dladdr(ptr, &info) != 0 && info.dli_sname != NULL && info.dli_saddr == ptr)
        snprintf(text, len, "%s", info.dli_sname);
    else
        snprintf(text, len, "<kernel %p>", ptr);
}

uint32_t obs_kernel_name_fallback(const void *ptr, bool is_handle)
{
    char text[1024];
    fallback_text(ptr, is_handle, text, sizeof text);
    return intern_and_map(is_handle ? &obs_names_by_handle : &obs_names_by_host_fun, ptr, text);
}

void obs_kernel_names_alias(const void *handle, const void *host_fun)
{
    uint64_t id = 0;
    if (handle == NULL || host_fun == NULL)
        return;
    if (!obs_ptrmap_get(&obs_names_by_host_fun, (uintptr_t)host_fun, &id))
        id = obs_kernel_name_fallback(host_fun, false);
    if (id == 0)
        return;
    pthread_mutex_lock(&names_lock);
    obs_ptrmap_put(&obs_names_by_handle, (uintptr_t)handle, id);
    pthread_mutex_unlock(&names_lock);
}

const char *obs_kernel_name_mangled(uint32_t id)
{
    if (id == 0 || id > atomic_load_explicit(&name_count, memory_order_acquire))
        return NULL;
    return entry_of(id)->mangled;
}

/* Under the output lock: the demangled form of a name written without
 * one, if the C++ runtime has been loaded since (the cached demangler
 * only: no dlsym under our locks). */
static void write_demangled_later_locked(void)
{
    cxa_demangle_fn fn = atomic_load(&demangler);
    uint32_t id;
    if (fn == NULL)
        return;
    for (id = 1; id <= names_written && demangle_later > 0; id++) {
        struct name_entry *e = entry_of(id);
        if (!e->demangled_later)
            continue;
        if (e->demangled == NULL)
            e->demangled = demangle_with(fn, e->mangled);
        if (e->demangled != NULL &&
            obs_output_write_string_locked(id, OBS_STR_KERNEL_DEMANGLED, e->demangled, strlen(e->demangled)) != 0)
            return; /* retried at the next window */
        e->demangled_later = false; /* written, or not a C++ name after all */
        demangle_later--;
    }
}

/* The names' strings go out in STRINGS chunks of up to NAME_BATCH bytes:
 * one write for hundreds of names. One string a chunk (an lseek, the
 * write guard and a write each, two strings a name) cost a PyTorch
 * process ~250 ms at its first recorded call, where the tens of thousands
 * of kernels it registered at load are written (the thread's set-up,
 * the summary's one-time work; issue 36). Under the output lock. */
#define NAME_BATCH 65536u
static char name_batch[NAME_BATCH];
static uint32_t name_batch_used;

static int name_batch_flush(void)
{
    int rc = name_batch_used > 0 ? obs_output_write_strings_locked(name_batch, name_batch_used) : 0;
    name_batch_used = 0;
    return rc;
}

/* One string into the batch (flushed first when it does not fit; one too
 * long for a batch goes alone). */
static int name_batch_add(uint32_t id, uint32_t kind, const char *text)
{
    size_t len = strlen(text);
    uint32_t got;
    if (len > NAME_BATCH / 2)
        return name_batch_flush() != 0 ? -1 : obs_output_write_string_locked(id, kind, text, len);
    got = obs_string_entry_encode(name_batch + name_batch_used, NAME_BATCH - name_batch_used, id, kind, text,
                                  (uint32_t)len);
    if (got == 0) {
        if (name_batch_flush() != 0)
            return -1;
        got = obs_string_entry_encode(name_batch, NAME_BATCH, id, kind, text, (uint32_t)len);
    }
    name_batch_used += got;
    return 0;
}

void obs_kernel_names_write_pending_locked(bool from_signal)
{
    uint32_t count = atomic_load_explicit(&name_count, memory_order_acquire), id, batched = names_written;
    name_batch_used = 0;
    for (id = names_written + 1; id <= count; id++) {
        struct name_entry *e = entry_of(id);
        uint32_t before = name_batch_used;
        /* The C++ runtime may have been loaded since the name was interned
         * (only the cached demangler: no dlsym under our locks). */
        if (!from_signal && e->demangled == NULL)
            e->demangled = demangle_with(atomic_load(&demangler), e->mangled);
        if (name_batch_add(id, OBS_STR_KERNEL_MANGLED, e->mangled) != 0 ||
            (e->demangled != NULL && name_batch_add(id, OBS_STR_KERNEL_DEMANGLED, e->demangled) != 0))
            return; /* the names after the last chunk written: retried at the next window */
        if (name_batch_used < before)
            names_written = batched; /* a chunk went out: the names before this one are in the file */
        if (e->demangled == NULL && strncmp(e->mangled, "_Z", 2) == 0 && !e->demangled_later) {
            e->demangled_later = true; /* no demangler yet: its demangled form when there is one */
            demangle_later++;
        }
        batched = id;
    }
    if (name_batch_flush() != 0)
        return;
    names_written = batched;
    if (!from_signal && demangle_later > 0)
        write_demangled_later_locked();
}

void obs_kernel_names_fork_prepare(void)
{
    pthread_mutex_lock(&names_lock);
}

void obs_kernel_names_fork_parent(void)
{
    pthread_mutex_unlock(&names_lock);
}

void obs_kernel_names_fork_child(void)
{
    uint32_t count = atomic_load_explicit(&name_count, memory_order_relaxed), id;
    pthread_mutex_unlock(&names_lock);
    for (id = 1; id <= count; id++)
        entry_of(id)->demangled_later = false;
    names_written = 0;
    demangle_later = 0;
}
