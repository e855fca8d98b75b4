/* The OBS_PHASES / OBS_STEP parser (shim/phases/phase_rules.c): good rules, what
 * they match, every kind of bad rule with the column it is reported at,
 * base names of demangled kernels, globs; then the kept fuzz corpus
 * (tests/fuzz/phase_rules_corpus) replayed through the fuzz body, which
 * aborts on a broken invariant. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "phases/phase_rules.h"
#include "phase_rules_fuzz.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_format.h"

static void test_good_rules(void)
{
    struct obs_phase_rules r;
    struct obs_phase_rule_error err;

    is_int(0, obs_phase_rules_parse("PREFILL=prefill_*;KV_GATHER=kv_gather*;DECODE=decode_*", false, &r, &err),
           "the reference rules parse");
    is_int(3, r.count, "three patterns");
    is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_kernel(&r, "prefill_kernel"), "prefill_kernel is PREFILL");
    is_int(OBS_PHASE_KV_GATHER, obs_phase_rules_match_kernel(&r, "kv_gather_kernel"), "kv_gather_kernel is KV_GATHER");
    is_int(OBS_PHASE_DECODE, obs_phase_rules_match_kernel(&r, "decode_kernel"), "decode_kernel is DECODE");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_kernel(&r, "gemm"), "gemm matches nothing");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_memcpy(&r, OBS_DIR_DTOH), "no copy rule");

    is_int(0, obs_phase_rules_parse(" decode = memcpy:dtoh , sample* ; prefill=* ;; ", false, &r, &err),
           "blanks, any case, empty rules, trailing ';'");
    is_int(3, r.count, "three patterns");
    is_int(OBS_PHASE_DECODE, obs_phase_rules_match_memcpy(&r, OBS_DIR_DTOH), "memcpy:DtoH is DECODE");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_memcpy(&r, OBS_DIR_HTOD), "memcpy:HtoD is not");
    is_int(OBS_PHASE_DECODE, obs_phase_rules_match_kernel(&r, "sample_argmax"), "first match wins (sample*)");
    is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_kernel(&r, "anything"), "then the catch-all");

    is_int(0, obs_phase_rules_parse("PREFILL=memcpy,memset;DECODE=memcpy:*", false, &r, &err),
           "memcpy alone, memset, memcpy:*");
    is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_memcpy(&r, OBS_DIR_PEER), "memcpy alone: any direction");
    is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_memset(&r), "memset");

    is_int(0, obs_phase_rules_parse("kv_gather*, step_begin", true, &r, &err), "OBS_STEP: a pattern list");
    is_int(OBS_PHASE_DECODE, obs_phase_rules_match_kernel(&r, "step_begin"), "OBS_STEP patterns match");
    is_int(0, obs_phase_rules_parse("   ", false, &r, &err), "blank text: no rules");
    is_int(0, r.count, "and zero patterns");
}

/* Size conditions and iteration selectors (issue 11: prefill and decode
 * running the same kernels). */
static void test_conditions(void)
{
    struct obs_phase_rules r;
    struct obs_phase_rule_error err;
    struct obs_launch_size big = obs_launch_size_of(2048, 256), small = obs_launch_size_of(16, 256);
    uint32_t embed, mlp;

    is_int(0, obs_phase_rules_parse("PREFILL=embed*[threads>=65536];KV_GATHER=*kv*;DECODE=*", false, &r, &err),
           "a threads condition parses");
    is_int(3, r.count, "three patterns");
    is_int(1, (long long)r.sized_mask, "the first pattern is sized");
    is_int(0, (long long)r.iter_mask, "no selectors");
    is_int(OBS_PHASE_DECODE, obs_phase_rules_match_kernel(&r, "embed_tokens"),
           "plain matching skips the conditional pattern");
    embed = obs_phase_rules_kernel_mask(&r, "embed_tokens");
    mlp = obs_phase_rules_kernel_mask(&r, "mlp");
    is_int(5, (long long)embed, "embed_tokens: mask of embed* and *");
    ok(obs_phase_rules_sized(&r, embed), "embed_tokens must be evaluated per launch");
    ok(!obs_phase_rules_sized(&r, mlp), "mlp need not");
    is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_launch(&r, embed, &big), "embed 2048x256: PREFILL");
    is_int(OBS_PHASE_DECODE, obs_phase_rules_match_launch(&r, embed, &small), "embed 16x256: DECODE");
    is_int(OBS_PHASE_DECODE, obs_phase_rules_match_launch(&r, mlp, &big), "mlp: DECODE at any size");

    is_int(0, obs_phase_rules_parse("DECODE=a[ grid < 4k ][block=256],a [threads>1M]; PREFILL=a", false, &r, &err),
           "blanks inside conditions, several conditions, k and M");
    is_int(2, r.patterns[0].nconds, "two conditions on the first pattern");
    is_int(4096, (long long)r.patterns[0].conds[0].value, "4k is 4096");
    is_int(OBS_OP_LT, r.patterns[0].conds[0].op, "<");
    is_int(OBS_SIZE_BLOCK, r.patterns[0].conds[1].field, "block");
    is_int(OBS_OP_EQ, r.patterns[0].conds[1].op, "=");
    is_int(1048576, (long long)r.patterns[1].conds[0].value, "1M is 1048576");
    {
        uint32_t m = obs_phase_rules_kernel_mask(&r, "a");
        struct obs_launch_size s1 = obs_launch_size_of(100, 256), s2 = obs_launch_size_of(100, 128),
                               s3 = obs_launch_size_of(8192, 256), s4 = obs_launch_size_of(4096, 128);
        is_int(OBS_PHASE_DECODE, obs_phase_rules_match_launch(&r, m, &s1), "grid 100 block 256: first pattern");
        is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_launch(&r, m, &s2), "block 128: the plain PREFILL=a");
        is_int(OBS_PHASE_DECODE, obs_phase_rules_match_launch(&r, m, &s3), "threads 2M: the second pattern");
        is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_launch(&r, m, &s4), "grid 4096 is not < 4096");
    }
    {
        struct obs_launch_size huge = obs_launch_size_of(UINT64_MAX / 2, 1024);
        ok(huge.threads == UINT64_MAX, "threads saturate");
    }
    is_int(0, obs_phase_rules_parse("PREFILL=a[grid<0],b[threads>18446744073709551615],c[block>2][block<=2],d[grid=7]",
                                    false, &r, &err),
           "conditions that can never hold parse");
    {
        struct obs_launch_size s0 = obs_launch_size_of(0, 0), s7 = obs_launch_size_of(7, 3),
                               smax = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
        ok(!obs_phase_pattern_holds(&r.patterns[0], &s0) && !obs_phase_pattern_holds(&r.patterns[1], &smax) &&
               !obs_phase_pattern_holds(&r.patterns[2], &s7),
           "grid<0, threads>max, block>2 and block<=2 never hold");
        ok(obs_phase_pattern_holds(&r.patterns[3], &s7) && !obs_phase_pattern_holds(&r.patterns[3], &s0),
           "grid=7 holds for 7 blocks only");
    }
    is_int(0, obs_phase_rules_parse("PREFILL=f[abi:cxx11],g[x", false, &r, &err),
           "a '[' not followed by a word and an operator is a glob character, as before");
    is_string("f[abi:cxx11]", r.patterns[0].glob, "f[abi:cxx11] kept as a glob");
    is_string("g[x", r.patterns[1].glob, "g[x kept as a glob");
    is_int(0, (long long)r.sized_mask, "no conditions");

    is_int(0,
           obs_phase_rules_parse("PREFILL=iter:after:memcpy:HtoD,iter:embed*[threads>=64k];KV_GATHER=*kv*;DECODE=*",
                                 false, &r, &err),
           "selectors parse");
    is_int(4, r.count, "four patterns");
    is_int(3, (long long)r.iter_mask, "two selectors");
    is_int(2, (long long)r.iter_kernel_mask, "one kernel selector");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_memcpy(&r, OBS_DIR_HTOD), "a selector does not classify copies");
    is_int(OBS_PHASE_KV_GATHER, obs_phase_rules_match_kernel(&r, "kv_cache_gather"),
           "a selector does not classify kernels");
    embed = obs_phase_rules_kernel_mask(&r, "embed_tokens");
    ok(!obs_phase_rules_sized(&r, embed), "selectors do not make a name sized");
    is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_iteration(&r, embed, &small, 1u << OBS_DIR_HTOD),
           "iteration after an HtoD copy: PREFILL");
    is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_iteration(&r, embed, &big, 0),
           "iteration starting with a big embed: PREFILL");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_iteration(&r, embed, &small, 1u << OBS_DIR_DTOH),
           "small embed after a token read: no selector");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_iteration(&r, embed, NULL, 0), "a graph launch first: none");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_iteration(&r, mlp, &big, 0), "a big mlp first: none (glob)");

    is_int(0, obs_phase_rules_parse("decode=ITER:After:Memset,iter:after:memcpy;prefill=iter:AFTER:MEMCPY:dtoh", false,
                                    &r, &err),
           "selectors in any case");
    is_int(OBS_PHASE_DECODE, obs_phase_rules_match_iteration(&r, 0, NULL, OBS_AFTER_MEMSET), "after a memset");
    is_int(OBS_PHASE_DECODE, obs_phase_rules_match_iteration(&r, 0, NULL, 1u << OBS_DIR_DTOH),
           "after any copy (first selector written wins)");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_iteration(&r, 0, NULL, 0), "after nothing");

    is_int(0, obs_phase_rules_parse("PREFILL=iter:after:memcpy:HtoD, Iter:Until:Token;DECODE=*", false, &r, &err),
           "iter:until:token parses (any case)");
    is_int(OBS_PATTERN_UNTIL_TOKEN, r.patterns[1].kind, "iter:until:token is its own kind of selector");
    is_int(3, (long long)r.iter_mask, "two selectors");
    is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_iteration(&r, 0, NULL, OBS_AFTER_NO_TOKEN),
           "until:token holds before the generation's token read (a graph launch first too)");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_iteration(&r, 0, &small, 0), "and not after it");

    is_int(0, obs_phase_rules_parse("PREFILL=iter:after:memcpy:HtoD, iter:UNTIL:forward;DECODE=*", false, &r, &err),
           "iter:until:forward parses (any case)");
    is_int(OBS_PATTERN_UNTIL_FORWARD, r.patterns[1].kind, "iter:until:forward is its own kind of selector");
    is_int(OBS_PHASE_PREFILL, obs_phase_rules_match_iteration(&r, 0, NULL, OBS_AFTER_FIRST_FORWARD),
           "until:forward holds while the generation has begun at most one forward");
    is_int(OBS_PHASE_NONE, obs_phase_rules_match_iteration(&r, 0, &small, OBS_AFTER_NO_TOKEN),
           "and not after its second, token read or not");

    /* [bytes] on iter:after: selectors: a prompt's token ids copied in, not a step's one token */
    is_int(0,
           obs_phase_rules_parse("PREFILL=iter:after:memcpy:HtoD [ bytes >= 16 ],iter:until:token;"
                                 "KV_GATHER=iter:after:memset[bytes>1M][bytes<=4M];DECODE=*",
                                 false, &r, &err),
           "[bytes] conditions on iter:after: selectors parse (blanks around them)");
    is_int(7, (long long)r.iter_mask, "three selectors");
    is_int(5, (long long)r.iter_bytes_mask, "two of them with [bytes]");
    is_int(0, (long long)r.sized_mask, "no kernel sized by them");
    is_int(1u << 0, (long long)obs_phase_rules_transfer_bytes(&r, OBS_PATTERN_MEMCPY, OBS_DIR_HTOD, 72),
           "a 72-byte copy in meets the first");
    is_int(1u << 0, (long long)obs_phase_rules_transfer_bytes(&r, OBS_PATTERN_MEMCPY, OBS_DIR_HTOD, 16),
           "16 bytes too (>=)");
    is_int(0, (long long)obs_phase_rules_transfer_bytes(&r, OBS_PATTERN_MEMCPY, OBS_DIR_HTOD, 8),
           "a step's 8-byte token does not");
    is_int(0, (long long)obs_phase_rules_transfer_bytes(&r, OBS_PATTERN_MEMCPY, OBS_DIR_DTOH, 72),
           "nor a copy out of 72 bytes (another direction)");
    is_int(0, (long long)obs_phase_rules_transfer_bytes(&r, OBS_PATTERN_MEMSET, 0, 1048576),
           "a memset of 1M: not over 1M");
    is_int(1u << 2, (long long)obs_phase_rules_transfer_bytes(&r, OBS_PATTERN_MEMSET, 0, 4194304),
           "one of 4M meets the memset's two conditions");
    is_int(0, (long long)obs_phase_rules_transfer_bytes(&r, OBS_PATTERN_MEMSET, 0, 4194305), "one byte more does not");
    {
        uint8_t kind = 0;
        is_int(OBS_PHASE_PREFILL,
               obs_phase_rules_match_iteration_kind(&r, 0, &small, 1u << OBS_DIR_HTOD, 1u << 0, &kind),
               "after a 72-byte copy in: PREFILL");
        is_int(OBS_PATTERN_MEMCPY, kind, "by the copy selector");
        is_int(OBS_PHASE_NONE, obs_phase_rules_match_iteration_kind(&r, 0, &small, 1u << OBS_DIR_HTOD, 0, &kind),
               "after an 8-byte one (its bit unset): none");
        is_int(OBS_PHASE_KV_GATHER,
               obs_phase_rules_match_iteration_kind(&r, 0, &small, OBS_AFTER_MEMSET, 1u << 2, &kind),
               "after a 4M memset: the memset selector's phase");
        is_int(OBS_PHASE_PREFILL,
               obs_phase_rules_match_iteration_kind(&r, 0, NULL, 1u << OBS_DIR_HTOD | OBS_AFTER_NO_TOKEN, 0, &kind),
               "before the token read: until:token, whatever the bytes");
    }
    is_int(0, obs_phase_rules_parse("PREFILL=iter:after:memcpy[bytes>=4]", false, &r, &err),
           "[bytes] on any copy kind");
    is_int(1u << 0, (long long)obs_phase_rules_transfer_bytes(&r, OBS_PATTERN_MEMCPY, OBS_DIR_DTOD, 4),
           "a copy of any direction meets it");
}

/* One bad text: the parse fails at column col with a message containing what. */
static void bad(const char *text, bool step, size_t col, const char *what)
{
    struct obs_phase_rules r;
    struct obs_phase_rule_error err;
    int rc = obs_phase_rules_parse(text, step, &r, &err);
    is_int(-1, rc, "bad: \"%.40s\" is refused", text);
    is_int((long long)col, (long long)err.column, "bad: \"%.40s\": column %zu", text, col);
    ok(strstr(err.what, what) != NULL, "bad: \"%.40s\": says '%s' (%s)", text, what, err.what);
    is_int(0, r.count, "bad: no rules kept");
}

static void test_bad_rules(void)
{
    char *long_text, *long_glob;

    bad("FOO=x", false, 1, "unknown phase 'FOO'");
    bad("PREFILL=a;BAR=b", false, 11, "unknown phase 'BAR'");
    bad("=x", false, 1, "empty phase name");
    bad("PREFILL=", false, 9, "empty pattern");
    bad("PREFILL=a,,b", false, 11, "empty pattern");
    bad("PREFILL a", false, 9, "expected '='");
    bad("PREFILL", false, 8, "expected '='");
    bad("DECODE=memcpy:DtoX", false, 15, "unknown copy kind 'DtoX'");
    bad("DECODE=memcpy:", false, 15, "empty copy kind");
    bad("PREFILL=a b", false, 11, "unexpected character 'b'");
    bad("PREFILL=a\x01", false, 10, "unexpected character");
    bad("PREFILL=caf\xc3\xa9", false, 12, "unexpected character");
    bad("a;b", true, 2, "unexpected character ';'");
    bad("*,", true, 3, "empty pattern");
    bad("k*,memcpy:DtoH", true, 4, "not a kernel pattern");

    /* conditions and selectors */
    bad("PREFILL=embed*[thread>=1]", false, 16, "unknown size 'thread'");
    bad("PREFILL=embed*[threads=>1]", false, 24, "expected a number");
    bad("PREFILL=embed*[threads>=]", false, 25, "expected a number");
    bad("PREFILL=embed*[threads>=12x]", false, 27, "expected ']'");
    bad("PREFILL=embed*[threads>=12", false, 27, "expected ']'");
    bad("PREFILL=e[grid<99999999999999999999]", false, 16, "number too large");
    bad("PREFILL=e[grid<18014398509481984k]", false, 16, "number too large");
    bad("PREFILL=e[grid<1]x", false, 18, "after a condition");
    bad("PREFILL=e[grid<1][abc", false, 18, "after a condition");
    bad("PREFILL=[grid<1]", false, 9, "needs a kernel glob");
    bad("PREFILL=e[grid<1][grid<1][grid<1][grid<1][grid<1]", false, 42, "too many conditions");
    bad("PREFILL=memcpy:HtoD[grid<1]", false, 20, "kernel globs and iter:after: copies and memsets only");
    bad("PREFILL=memcpy:HtoD[bytes>=16]", false, 20, "kernel globs and iter:after: copies and memsets only");
    bad("PREFILL=embed*[bytes>=16]", false, 16, "a kernel's condition is on threads, grid or block, not 'bytes'");
    bad("PREFILL=iter:embed*[bytes>=16]", false, 21, "a kernel's condition is on threads, grid or block");
    bad("PREFILL=iter:after:memcpy:HtoD[bytes>=]", false, 39, "expected a number");
    bad("PREFILL=iter:after:memcpy:HtoD[bytes>=1]x", false, 41, "after a condition");
    bad("PREFILL=iter:", false, 14, "empty selector");
    bad("PREFILL=iter:,x", false, 14, "empty selector");
    bad("PREFILL=iter:after:", false, 20, "after 'iter:after:'");
    bad("PREFILL=iter:after:gemm", false, 20, "after 'iter:after:'");
    bad("PREFILL=iter:after:memcpy:DtoX", false, 27, "unknown copy kind 'DtoX'");
    bad("PREFILL=iter:after:memset[grid<1]", false, 27, "a copy's or memset's condition is on bytes, not 'grid'");
    bad("PREFILL=iter:memcpy:HtoD", false, 14, "iter:after:memcpy:HtoD");
    bad("PREFILL=iter:until:token[threads>1]", false, 25, "kernel globs and iter:after: copies and memsets only");
    bad("PREFILL=iter:", false, 14, "until:token");
    bad("PREFILL=iter:", false, 14, "until:forward");
    bad("iter:until:forward", true, 1, "not a kernel glob");
    bad("k*,iter:a*", true, 4, "not a kernel glob");
    bad("k*[grid<1]", true, 3, "no conditions");

    long_glob = malloc(300);
    memcpy(long_glob, "DECODE=", 7);
    memset(long_glob + 7, 'g', 200);
    long_glob[207] = '\0';
    bad(long_glob, false, 7 + 128 + 1, "longer than 128");
    free(long_glob);

    long_text = malloc(3000);
    memset(long_text, ';', 2000);
    long_text[2000] = '\0';
    bad(long_text, false, 1025, "longer than 1024");
    free(long_text);

    {
        char many[600] = "DECODE=a";
        int i;
        for (i = 0; i < 32; i++)
            strcat(many, ",b");
        bad(many, false, 8 + 2 * 32, "too many patterns");
    }
}

static void test_names(void)
{
    static const struct {
        const char *name, *base;
    } cases[] = {
        {"prefill_kernel", "prefill_kernel"},
        {"prefill_kernel(float*, float const*, int, int)", "prefill_kernel"},
        {"void ns::decode_kernel<4, float>(float*, int)", "decode_kernel"},
        {"(anonymous namespace)::kv_gather(float*)", "kv_gather"},
        {"void at::native::(anonymous namespace)::reduce<at::Foo<int> >(int)", "reduce"},
        {"flash::fwd<(bool)1>", "fwd"},
        {"", ""},
    };
    char out[64];
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        obs_kernel_base_name(cases[i].name, out, sizeof out);
        is_string(cases[i].base, out, "base name of \"%s\"", cases[i].name);
    }
    ok(obs_mangled_base_name("_Z12embed_tokensPKiPfi", out, sizeof out) && strcmp(out, "embed_tokens") == 0,
       "mangled base name: _Z12embed_tokensPKiPfi");
    ok(obs_mangled_base_name("_ZN2ns6decodeIiEEvPf", out, sizeof out) && strcmp(out, "decode") == 0,
       "mangled base name: _ZN2ns6decodeIiEEvPf");
    ok(obs_mangled_base_name("_ZNK3foo3barEv", out, sizeof out) && strcmp(out, "bar") == 0,
       "mangled base name: _ZNK3foo3barEv");
    ok(!obs_mangled_base_name("_Z99short", out, sizeof out), "mangled base name: a length past the end");
    ok(!obs_mangled_base_name("prefill_kernel", out, sizeof out), "mangled base name: not mangled");
    obs_kernel_base_name("a_very_long_kernel_name_that_does_not_fit", out, 8);
    is_string("a_very_", out, "base name cut to the buffer");

    ok(obs_glob_match("kv_gather*", "kv_gather_kernel"), "glob: prefix");
    ok(obs_glob_match("*gather*", "kv_gather_kernel"), "glob: infix");
    ok(obs_glob_match("de?ode_*", "decode_kernel"), "glob: ?");
    ok(!obs_glob_match("decode_", "decode_kernel"), "glob: anchored at the end");
    ok(!obs_glob_match("Decode*", "decode_kernel"), "glob: case sensitive");
    ok(obs_glob_match("*", ""), "glob: * matches nothing too");
    ok(!obs_glob_match("a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "glob: no blow-up");
}

/* Every file of the kept corpus through the fuzz body (it aborts on failure). */
static void test_corpus(void)
{
    char dir[4096];
    DIR *d;
    snprintf(dir, sizeof dir, "%s", test_path(test_srcdir(), "tests/fuzz/phase_rules_corpus"));
    d = opendir(dir);
    struct dirent *e;
    size_t files = 0, failed = 0;
    if (d == NULL) {
        ok(0, "corpus directory %s readable", dir);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        size_t len;
        char *data;
        if (e->d_name[0] == '.')
            continue;
        data = test_read_file(test_path(dir, e->d_name), &len);
        if (data == NULL) {
            failed++;
            continue;
        }
        obs_fuzz_phase_rules((const uint8_t *)data, len);
        free(data);
        files++;
    }
    closedir(d);
    ok(files >= 10 && failed == 0, "fuzz corpus replayed: %zu files, %zu unreadable", files, failed);
}

/* The phase engine's settings (shim/common/config.c). */
static const char *const *fake_env;

static const char *fake_lookup(const char *name)
{
    size_t n = strlen(name), i;
    for (i = 0; fake_env != NULL && fake_env[i] != NULL; i++)
        if (strncmp(fake_env[i], name, n) == 0 && fake_env[i][n] == '=')
            return fake_env[i] + n + 1;
    return NULL;
}

static void test_config(void)
{
    struct obs_config cfg;
    char long_rule[2100];
    {
        const char *const env[] = {NULL};
        fake_env = env;
        is_int(0, obs_config_load(&cfg, fake_lookup), "config: phase settings default quietly");
        ok(!cfg.phases_off && cfg.phases[0] == '\0' && cfg.step[0] == '\0', "config: automatic phases by default");
        is_string("obsshim", cfg.nvtx_domain, "config: NVTX domain obsshim");
        ok(!cfg.nvtx_launch && cfg.gen_gap_ms == 1000, "config: no launch ranges, 1000 ms generation gap");
    }
    {
        const char *const env[] = {"OBS_PHASES=PREFILL=p*", "OBS_STEP=k*", "OBS_ITERATION=e*,g*", "OBS_NVTX_DOMAIN=",
                                   "OBS_NVTX_LAUNCH=1", "OBS_GEN_GAP_MS=250", NULL};
        fake_env = env;
        is_int(0, obs_config_load(&cfg, fake_lookup), "config: good phase settings");
        is_string("PREFILL=p*", cfg.phases, "config: OBS_PHASES kept as text");
        is_string("k*", cfg.step, "config: OBS_STEP kept as text");
        is_string("e*,g*", cfg.iteration, "config: OBS_ITERATION kept as text");
        is_string("", cfg.nvtx_domain, "config: empty domain (NVTX's default)");
        ok(cfg.nvtx_launch && cfg.gen_gap_ms == 250, "config: launch ranges on, 250 ms gap");
    }
    {
        const char *const env[] = {"OBS_PHASES=off", NULL};
        fake_env = env;
        is_int(0, obs_config_load(&cfg, fake_lookup), "config: OBS_PHASES=off");
        ok(cfg.phases_off, "config: the engine is off");
    }
    {
        const char *const env[] = {"OBS_GEN_GAP_MS=0", "OBS_NVTX_LAUNCH=maybe", "OBS_NVTX_DOMAIN=a\tb", NULL};
        fake_env = env;
        is_int(3, obs_config_load(&cfg, fake_lookup), "config: three bad phase settings, three warnings");
        ok(cfg.gen_gap_ms == 1000 && !cfg.nvtx_launch, "config: bad values give the defaults");
        is_string("obsshim", cfg.nvtx_domain, "config: bad domain gives obsshim");
    }
    {
        const char *env[] = {long_rule, NULL};
        memcpy(long_rule, "OBS_PHASES=", 11);
        memset(long_rule + 11, 'x', 2000);
        long_rule[2011] = '\0';
        fake_env = env;
        is_int(0, obs_config_load(&cfg, fake_lookup), "config: an over-long rule is left to the parser");
        is_int(OBS_PHASE_RULES_TEXT_MAX + 1, (long long)strlen(cfg.phases),
               "config: kept to one character past the parser's limit");
    }
}

int main(void)
{
    plan_lazy();
    test_config();
    test_good_rules();
    test_conditions();
    test_bad_rules();
    test_names();
    test_corpus();
    return 0;
}
