/* RTLD_DEEPBIND puts a library's own dependencies before the global scope
 * when its symbols are bound: its calls into libcudart / libamdhip64 /
 * libcuda / libnccl (and its dlsym, bound to libc's) go past the preloaded shim, so
 * none of them would be recorded. Interposing dlopen to fix the binding
 * afterwards would make the shim glibc's "caller" of dlopen (its RPATH,
 * RUNPATH and $ORIGIN instead of the caller's), so the binding is fixed
 * later instead: a program reaches what a library it opened offers through
 * dlsym on its handle, and our dlsym hook runs this first.
 *
 * When the loader's count of loaded objects (dl_iterate_phdr's dlpi_adds)
 * changed since the last pass, every object of the base namespace (not the
 * shim, not a dlmopen namespace, where the shim is not loaded) is scanned:
 * a relocated slot (JUMP_SLOT, GLOB_DAT, an absolute 64-bit address) naming
 * a symbol we hook, whose global-scope definition is ours, and which holds
 * the real function our wrapper calls or still the object's own lazy PLT
 * stub, is set to our wrapper. For an object bound the ordinary way that
 * is what the dynamic linker chose (or will choose) anyway; only DEEPBIND
 * objects change. A read-only (RELRO) slot's page is made writable for the
 * store and read-only again. x86-64 and AArch64; elsewhere nothing is done.
 *
 * Limit: calls a DEEPBIND library makes before the program's next dlsym on
 * a handle (its constructors) are not recorded. */
#include "deepbind_rebind.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hooks_runtime.h"
#include "common/common.h"
#include "record/record.h"
#include "runtimes/real_symbols.h"

#if defined(__x86_64__)
#define REBIND_SUPPORTED 1
#define REL_JUMP_SLOT R_X86_64_JUMP_SLOT
#define REL_GLOB_DAT R_X86_64_GLOB_DAT
#define REL_ABS64 R_X86_64_64
#elif defined(__aarch64__)
#define REBIND_SUPPORTED 1
#define REL_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define REL_GLOB_DAT R_AARCH64_GLOB_DAT
#define REL_ABS64 R_AARCH64_ABS64
#else
#define REBIND_SUPPORTED 0
#endif

/* One symbol we hook: its name, our wrapper, the real function. */
struct hook_entry {
    const char *name;
    void *wrapper, *real;
};

#define HOOK_ENTRIES_MAX 1024

static pthread_mutex_t rebind_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hook_entry entries[HOOK_ENTRIES_MAX];
static size_t entry_count;

/* ---- the loader's count of loaded objects ---------------------------------- */

struct load_counts {
    unsigned long long adds, subs;
};

static int read_counts(struct dl_phdr_info *info, size_t size, void *data)
{
    struct load_counts *c = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
    }
    return 1; /* the first object says it */
}

static struct load_counts last_counts; /* under rebind_lock */

static struct load_counts load_counts(void)
{
    struct load_counts c = {0, 0};
    dl_iterate_phdr(read_counts, &c);
    return c;
}

#if REBIND_SUPPORTED

/* ---- what we hook, resolved before the scan (the scan holds the loader's
 * lock, under which no dlsym or dlopen may run) --------------------------- */

/* Which tables' libraries are loaded, by DT_SONAME (no file search, unlike
 * dlopen(RTLD_NOLOAD) of a name not loaded): looking up every symbol of a
 * runtime the process does not use would cost a search of every object
 * per name, at every pass. */
static struct obs_real_table *const tables[] = {&obs_real_cuda, &obs_real_hip, &obs_real_cudrv, &obs_real_nccl};
#define TABLE_COUNT (sizeof tables / sizeof tables[0])

static const char *object_soname(struct dl_phdr_info *info)
{
    const ElfW(Dyn) *dyn = NULL;
    ElfW(Addr) strtab = 0, soname = 0;
    bool has_soname = false;
    size_t i;
    for (i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    for (; dyn != NULL && dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_STRTAB)
            strtab = dyn->d_un.d_ptr;
        else if (dyn->d_tag == DT_SONAME) {
            soname = dyn->d_un.d_val;
            has_soname = true;
        }
    }
    if (!has_soname || strtab == 0)
        return NULL;
    if (strtab < info->dlpi_addr)
        strtab += info->dlpi_addr;
    return (const char *)(uintptr_t)strtab + soname;
}

static int find_tables(struct dl_phdr_info *info, size_t size, void *data)
{
    bool *loaded = data;
    const char *soname = object_soname(info);
    size_t t;
    const char *const *name;
    (void)size;
    for (t = 0; soname != NULL && t < TABLE_COUNT; t++)
        for (name = tables[t]->sonames; *name != NULL; name++)
            if (strcmp(*name, soname) == 0)
                loaded[t] = true;
    return 0;
}

/* Per table and index: 0 not known yet, 1 the global scope binds the
 * symbol to our wrapper, 2 to something else (fixed once the preloaded
 * objects are in place). */
static unsigned char global_binding[TABLE_COUNT][1024];

static void add_entry(const char *name, void *wrapper, void *real)
{
    if (entry_count < HOOK_ENTRIES_MAX) {
        entries[entry_count].name = name;
        entries[entry_count].wrapper = wrapper;
        entries[entry_count].real = real;
        entry_count++;
    }
}

/* Only where the global scope binds the name to us: another interposer
 * preloaded before the shim keeps its place. */
static bool global_is_ours(size_t t, unsigned i, const char *name, void *wrapper)
{
    if (i >= sizeof global_binding[0])
        return obs_real_dlsym(RTLD_DEFAULT, name) == wrapper;
    if (global_binding[t][i] == 0)
        global_binding[t][i] = obs_real_dlsym(RTLD_DEFAULT, name) == wrapper ? 1 : 2;
    return global_binding[t][i] == 1;
}

static void collect_table(size_t t, void *(*hook_of)(const char *, void **))
{
    const struct obs_real_table *table = tables[t];
    unsigned i;
    for (i = 0; i < table->count; i++) {
        const char *name = table->symbols != NULL && table->symbols[i] != NULL ? table->symbols[i] : table->names[i];
        void *real = NULL, *wrapper = hook_of(name, &real);
        if (wrapper != NULL && global_is_ours(t, i, name, wrapper))
            add_entry(name, wrapper, real);
    }
}

static int entry_compare(const void *a, const void *b)
{
    return strcmp(((const struct hook_entry *)a)->name, ((const struct hook_entry *)b)->name);
}

static void collect_entries(void)
{
    static int dlsym_global = 0;
    bool loaded[TABLE_COUNT] = {false};
    size_t t;

    entry_count = 0;
    dl_iterate_phdr(find_tables, loaded);
    for (t = 0; t < TABLE_COUNT; t++)
        if (loaded[t] || obs_real_table_has_any(tables[t]))
            collect_table(t, tables[t] == &obs_real_cudrv ? obs_driver_hook_of : obs_runtime_hook_of);
    if (dlsym_global == 0)
        dlsym_global = obs_real_dlsym(RTLD_DEFAULT, "dlsym") == (void *)dlsym ? 1 : 2;
    if (dlsym_global == 1)
        add_entry("dlsym", (void *)dlsym, obs_real_dlsym_address());
    qsort(entries, entry_count, sizeof entries[0], entry_compare);
}

/* The entry of name, or NULL. Most names of a large library are C++
 * symbols: a prefix test rejects them before the search. */
static const struct hook_entry *entry_of(const char *name)
{
    struct hook_entry key;
    const char *p = name[0] == '_' && name[1] == '_' ? name + 2 : name;
    if (!((p[0] == 'c' && p[1] == 'u') || (p[0] == 'h' && p[1] == 'i' && p[2] == 'p') ||
          (name[0] == 'd' && strcmp(name, "dlsym") == 0) || strncmp(name, "_Z24hip", 7) == 0 ||
          strncmp(name, "nccl", 4) == 0))
        return NULL;
    key.name = name;
    return bsearch(&key, entries, entry_count, sizeof entries[0], entry_compare);
}

/* ---- one object -------------------------------------------------------------- */

struct object {
    ElfW(Addr) base;
    uintptr_t lo, hi;           /* its PT_LOAD extent */
    uintptr_t relro_lo, relro_hi; /* its PT_GNU_RELRO, or 0, 0 */
    const ElfW(Sym) * symtab;
    const char *strtab;
};

/* A d_ptr: relocated in place by glibc on these architectures, except in
 * objects whose dynamic section is read-only (the vDSO). */
static uintptr_t dyn_ptr(const struct object *o, ElfW(Addr) ptr)
{
    return ptr < o->base ? (uintptr_t)(o->base + ptr) : (uintptr_t)ptr;
}

static void store_slot(const struct object *o, void **slot, void *value)
{
    uintptr_t at = (uintptr_t)slot;
    if (at >= o->relro_lo && at < o->relro_hi) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        void *start = (void *)(at & ~(page - 1));
        size_t len = (at + sizeof(void *) - (uintptr_t)start + page - 1) & ~(page - 1);
        if (mprotect(start, len, PROT_READ | PROT_WRITE) != 0)
            return;
        __atomic_store_n(slot, value, __ATOMIC_RELEASE);
        mprotect(start, len, PROT_READ);
        return;
    }
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
}

static size_t rebind_relocs(const struct object *o, const ElfW(Rela) * rel, size_t bytes)
{
    size_t i, n = bytes / sizeof *rel, rebound = 0;
    for (i = 0; i < n; i++) {
        unsigned long type = ELF64_R_TYPE(rel[i].r_info);
        const struct hook_entry *e;
        void **slot, *now;
        if (type != REL_JUMP_SLOT && type != REL_GLOB_DAT && !(type == REL_ABS64 && rel[i].r_addend == 0))
            continue;
        if (ELF64_R_SYM(rel[i].r_info) == 0 ||
            (e = entry_of(o->strtab + o->symtab[ELF64_R_SYM(rel[i].r_info)].st_name)) == NULL)
            continue;
        slot = (void **)(o->base + rel[i].r_offset);
        now = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        /* The real function (bound past us), or a lazy slot not bound yet
         * (it points into the object itself, at its PLT). */
        if (now == e->real || (type == REL_JUMP_SLOT && (uintptr_t)now >= o->lo && (uintptr_t)now < o->hi)) {
            store_slot(o, slot, e->wrapper);
            rebound++;
        }
    }
    return rebound;
}

static bool in_base_namespace(ElfW(Addr) base)
{
    const struct link_map *m;
    for (m = _r_debug.r_map; m != NULL; m = m->l_next)
        if (m->l_addr == base)
            return true;
    return false;
}

/* Objects scanned since the entries last changed (by load address): each
 * pass scans only objects loaded since, unless a runtime function became
 * available (a slot bound to it may now be found) or an object was
 * unloaded (its address may be reused). Under rebind_lock. */
#define SCANNED_MAX 4096
static ElfW(Addr) scanned[SCANNED_MAX];
static size_t scanned_count;

static bool scanned_before(ElfW(Addr) base)
{
    size_t i;
    for (i = 0; i < scanned_count; i++)
        if (scanned[i] == base)
            return true;
    if (scanned_count < SCANNED_MAX)
        scanned[scanned_count++] = base;
    return false;
}

static int rebind_object(struct dl_phdr_info *info, size_t size, void *self_base)
{
    struct object o;
    const ElfW(Dyn) * dyn = NULL;
    ElfW(Addr) jmprel = 0, rela = 0;
    size_t pltrelsz = 0, relasz = 0, i, rebound = 0;
    bool plt_is_rela = true;

    (void)size;
    if (info->dlpi_addr == (ElfW(Addr))(uintptr_t)self_base || scanned_before(info->dlpi_addr) ||
        !in_base_namespace(info->dlpi_addr))
        return 0;
    memset(&o, 0, sizeof o);
    o.base = info->dlpi_addr;
    o.lo = UINTPTR_MAX;
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = (uintptr_t)(o.base + ph->p_vaddr);
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)start;
        else if (ph->p_type == PT_LOAD) {
            if (start < o.lo)
                o.lo = start;
            if (start + ph->p_memsz > o.hi)
                o.hi = start + ph->p_memsz;
        } else if (ph->p_type == PT_GNU_RELRO) {
            o.relro_lo = start;
            o.relro_hi = start + ph->p_memsz;
        }
    }
    if (dyn == NULL)
        return 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: o.symtab = (const ElfW(Sym) *)dyn_ptr(&o, dyn->d_un.d_ptr); break;
        case DT_STRTAB: o.strtab = (const char *)dyn_ptr(&o, dyn->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = dyn->d_un.d_ptr; break;
        case DT_PLTRELSZ: pltrelsz = dyn->d_un.d_val; break;
        case DT_PLTREL: plt_is_rela = dyn->d_un.d_val == DT_RELA; break;
        case DT_RELA: rela = dyn->d_un.d_ptr; break;
        case DT_RELASZ: relasz = dyn->d_un.d_val; break;
        default: break;
        }
    }
    if (o.symtab == NULL || o.strtab == NULL)
        return 0;
    if (jmprel != 0 && plt_is_rela)
        rebound += rebind_relocs(&o, (const ElfW(Rela) *)dyn_ptr(&o, jmprel), pltrelsz);
    if (rela != 0)
        rebound += rebind_relocs(&o, (const ElfW(Rela) *)dyn_ptr(&o, rela), relasz);
    if (rebound > 0)
        OBS_DEBUG_LOG(INTERCEPT, 1, "rebound %zu slots of %s to the hooks (a library bound past them)", rebound,
                      info->dlpi_name != NULL && info->dlpi_name[0] != '\0' ? info->dlpi_name : "(main program)");
    return 0;
}

void obs_deepbind_rebind(void)
{
    struct obs_guard guard;
    struct load_counts now;
    Dl_info self;

    if (atomic_load_explicit(&obs_state, memory_order_acquire) == OBS_STATE_DISABLED)
        return;
    obs_guard_enter(&guard);
    now = load_counts();
    pthread_mutex_lock(&rebind_lock);
    if ((now.adds != last_counts.adds || now.subs != last_counts.subs) &&
        dladdr((void *)obs_deepbind_rebind, &self) != 0) {
        size_t before = entry_count;
        if (now.subs != last_counts.subs)
            scanned_count = 0;
        last_counts = now;
        collect_entries();
        if (entry_count != before)
            scanned_count = 0;
        dl_iterate_phdr(rebind_object, self.dli_fbase);
    }
    pthread_mutex_unlock(&rebind_lock);
    obs_guard_leave(&guard);
}

#else

void obs_deepbind_rebind(void)
{
    (void)load_counts;
}

#endif
