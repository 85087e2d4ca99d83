/*
 * help.c - the command line's usage text: every command's usage line(s)
 * and the options each takes (`stallsim --help`, `stallsim --help
 * COMMAND`). Split from main.c, which runs the commands.
 */
#include "help.h"

#include <string.h>

#include "stall/config.h"
#include "stall/limits.h"

/* Every command: its complete usage line(s) and what it does; the options
 * below say which commands take them. `stallsim --help COMMAND` prints one. */
enum {
    C_RUN = 1,
    C_VAL = 2,
    C_CAL = 4,
    C_AN = 8,
    C_TL = 16,
    C_SW = 32,
    C_PLAN = 64,
    C_PLOT = 128,
    C_REP = 256,
    C_FULL = 512, /* an option's text in `stallsim --help` only */
    C_ONE = 1024  /* an option's text in `stallsim --help COMMAND` only */
};
static const struct cli_cmd {
    const char *name;
    int bit;
    const char *usage;
} cli_cmds[] = {
    {"run", C_RUN,
     "stallsim run TRACE|CONFIG.ini [-o DIR] [--set section.key=value]... [-j N] [-q]\n"
     "             [--analyze] [--timeline FILE.json [--window S:E] [--ranks R|LO-HI]] [--plots]\n"
     "             [--no-sync]"},
    {"validate", C_VAL,
     "stallsim validate TRACE|CONFIG.ini [-o DIR] [--set section.key=value]... [-j N] [-q]\n"
     "             [--analyze] [--timeline FILE.json [--window S:E] [--ranks R|LO-HI]] [--plots]\n"
     "             [--no-sync]"},
    {"calibrate", C_CAL,
     "stallsim calibrate [--cores N] [--gpus-per-node N] TRACE|CONFIG.ini TRACE|CONFIG.ini..."},
    {"analyze", C_AN, "stallsim analyze TRACE|CONFIG.ini [-o DIR] [--workers N] [--no-sync]"},
    {"timeline", C_TL,
     "stallsim timeline TRACE|CONFIG.ini -o FILE.json [--window S:E] [--ranks R|LO-HI]\n"
     "             [--workers N] [--no-sync]"},
    {"sweep", C_SW,
     "stallsim sweep TRACE|CONFIG.ini [-o DIR] [-j N] [--set section.key=value]...\n"
     "             [--sweep section.key=LIST]... [--keep iterations] [--max-points N]\n"
     "             [--max-point-mb MB] [-q] [--plots] [--no-sync]"},
    {"plan", C_PLAN,
     "stallsim plan TRACE|CONFIG.ini [-o DIR] [--set section.key=value]... [-q] [--plots]\n"
     "             [--no-sync]"},
    {"plot", C_PLOT, "stallsim plot RESULT_DIR [--no-sync]"},
    {"report", C_REP, "stallsim report RESULT_DIR [--no-sync]"},
};

static const struct cli_opt {
    int cmds;
    const char *text;
} cli_opts[] = {
    {C_FULL, "  -o DIR          result folder (default results/<scenario name>/; validate, plan\n"
             "                  and sweep add -validate, -plan, -sweep; analyze:\n"
             "                  results/analyze-<name>/, the INI's file stem or the trace's name;\n"
             "                  each --set adds +section.key=value to the default name)\n"},
    {C_ONE | C_RUN, "  -o DIR          result folder (default results/<scenario name>/, and\n"
                    "                  +section.key=value for each --set)\n"},
    {C_ONE | C_VAL, "  -o DIR          result folder (default results/<scenario name>-validate/,\n"
                    "                  and +section.key=value for each --set)\n"},
    {C_ONE | C_SW, "  -o DIR          result folder (default results/<scenario name>-sweep/, and\n"
                   "                  +section.key=value for each --set)\n"},
    {C_ONE | C_PLAN, "  -o DIR          result folder (default results/<scenario name>-plan/, and\n"
                     "                  +section.key=value for each --set)\n"},
    {C_ONE | C_AN,
     "  -o DIR          result folder (default results/analyze-<name>/: the INI's file\n"
     "                  stem, e.g. results/analyze-w2/ for configs/w2.ini; for a\n"
     "                  trace, its name as run gives it); into a folder that holds\n"
     "                  other files (a run's), the analysis files are added\n"},
    {C_TL, "  -o FILE.json    the timeline's file\n"},
    {C_RUN | C_VAL | C_SW | C_PLAN,
     "  --set S.K=V     override an INI key, e.g. --set align.fetch=min\n"},
    {C_RUN | C_VAL | C_SW,
     "  -j N            run combinations in N threads (default: the CPUs online; output\n"
     "                  identical to -j 1); mode = model: also one run's nodes in N\n"
     "                  threads; sweep: points in N threads (default 1)\n"},
    {C_RUN | C_VAL | C_SW | C_PLAN, "  -q              no terminal summary\n"},
    {C_RUN | C_VAL,
     "  --analyze       (run, mode = model; validate) analyse the simulated run beside the\n"
     "                  measured trace, into the result folder\n"
     "  --timeline F    (run, mode = model; validate) the simulated run's timeline as JSON\n"},
    {C_RUN | C_VAL | C_TL,
     "  --window S:E    timeline: only events overlapping S..E seconds from the start\n"
     "  --ranks R|LO-HI timeline: only these ranks\n"},
    {C_AN | C_TL, "  --workers N     dsanalyzer traces: assign batches to N workers round robin\n"},
    {C_SW,
     "  --sweep S.K=LIST  a swept key (as a [sweep] line): v1, v2 | A..B | A..B xF | A..B +S\n"
     "  --keep iterations  keep each point's iterations.csv\n"
     "  --max-points N  refuse a grid of more points (default 1000000)\n"
     "  --max-point-mb MB  refuse a point that needs more memory\n"},
    {C_CAL, "  --cores N       the capture machine's cores per node (default: fitted)\n"
            "  --gpus-per-node N  GPUs per node of the traces\n"},
    {C_RUN | C_VAL | C_SW | C_PLAN,
     "  --plots         (run, validate, sweep, plan) then draw the figures (stallsim plot)\n"},
    {C_RUN | C_VAL | C_AN | C_TL | C_SW | C_PLAN | C_PLOT | C_REP,
     "  --no-sync       do not fsync results before renaming them into place: still whole\n"
     "                  or absent after Ctrl-C or a crash of stallsim, not after a power\n"
     "                  loss; saves the disk flush (milliseconds to seconds on busy disks)\n"},
};

/* `stallsim --help COMMAND`: its usage and its options. Returns 0, or 2 for
 * an unknown command. */
int cli_help_command(const char *name, FILE *f)
{
    for (size_t i = 0; i < sizeof cli_cmds / sizeof *cli_cmds; i++) {
        if (strcmp(cli_cmds[i].name, name) != 0)
            continue;
        fprintf(f, "usage: %s\n\noptions:\n", cli_cmds[i].usage);
        for (size_t k = 0; k < sizeof cli_opts / sizeof *cli_opts; k++)
            if (cli_opts[k].cmds & cli_cmds[i].bit)
                fputs(cli_opts[k].text, f);
        if (cli_cmds[i].bit & (C_SW | C_PLAN))
            fputs("\nTRACE: a tidy trace CSV (or a capture folder: its trace.csv) or one of the\n"
                  "notebook's three CSVs (its companions found beside it); the format is\n"
                  "detected from the content. An INI sets more. PyTorch profiler and DLIO\n"
                  "traces are read by run (mode = model), validate, analyze and timeline.\n",
                  f);
        else if (cli_cmds[i].bit & (C_RUN | C_VAL | C_AN | C_TL))
            fputs("\nTRACE: a tidy trace CSV (or a capture folder: its trace.csv), one of the\n"
                  "notebook's three CSVs (its companions found beside it), or a PyTorch profiler\n"
                  "(.json[.gz]) or DLIO (.pfw[.gz]) trace or a folder of them; the format is\n"
                  "detected from the content. An INI sets more.\n",
                  f);
        fputs("\nstallsim --help: every command, the semantics and the INI keys\n", f);
        return 0;
    }
    fprintf(stderr,
            "stallsim: --help %s: unknown command (run, validate, calibrate, analyze, "
            "timeline, sweep, plan, plot, report)\n",
            name);
    return 2;
}

void cli_usage(FILE *f)
{
    for (size_t i = 0; i < sizeof cli_cmds / sizeof *cli_cmds; i++)
        fprintf(f, "%s %s\n", i ? "      " : "usage:", cli_cmds[i].usage);
    fprintf(
        f, "       stallsim --help [COMMAND] | --version\n"
           "\n"
           "Simulates the data pipeline of a DDP training run from a measured trace:\n"
           "  run        mode = replay | seed: every alignment combination of a measured trace;\n"
           "             mode = model: the closed-loop what-if (workers, GPUs, cores, storage...)\n"
           "  validate   simulate a trace's measured configuration (tidy, dsanalyzer, kineto or\n"
           "             dftracer); simulated vs measured epoch time and stall per epoch\n"
           "             (results/<name>-validate/)\n"
           "  calibrate  from traces of one job with different worker counts (tidy or dsanalyzer,\n"
           "             or INIs of them), estimate the CPU share of a fetch (and the effective\n"
           "             cores) and print the INI lines\n"
           "  analyze    where a measured run's time went: per rank, per worker, over time, the\n"
           "             slowest batches, the straggler and a verdict (analyze.csv, per_rank.csv,\n"
           "             per_worker.csv, windows.csv, slowest.csv; checkpoint.csv for a trace\n"
           "             with checkpoints, storage.csv for a tidy trace with bytes, 2+ epochs)\n"
           "  timeline   a measured run as Chrome Trace Event JSON for ui.perfetto.dev\n"
           "  plot       the figures that fit a result folder (gnuplot: plots/*.png, *.svg,\n"
           "             with their data and scripts, written even without gnuplot)\n"
           "  report     one self-contained report.html of a result folder (tables,\n"
           "             verdict, figures inline)\n"
           "\n"
           "options (stallsim --help COMMAND: one command's):\n");
    for (size_t k = 0; k < sizeof cli_opts / sizeof *cli_opts; k++)
        if (!(cli_opts[k].cmds & C_ONE))
            fputs(cli_opts[k].text, f);
    fprintf(f,
            "\n"
            "TRACE: a tidy trace CSV (or a capture folder: its trace.csv), one of the notebook's\n"
            "three CSVs (its companions found beside it by their suffixes), or a PyTorch profiler\n"
            "(.json[.gz]) or DLIO (.pfw[.gz]) trace or a folder of them; the format is detected\n"
            "from the content, and one line says what was detected and assumed. An INI sets more.\n"
            "\n"
            "exit status: 0 ok, 2 bad input or configuration, 1 internal error\n"
            "\n"
            "semantics (docs/model.md):\n"
            "  keys      a key with no effect in the mode or trace format is an error (file:line\n"
            "            or --set); what-if keys apply in mode = model only\n"
            "  results   written beside the target and renamed into place: an old result folder\n"
            "            is replaced whole, a folder with other files refused; errors and\n"
            "            Ctrl-C/SIGTERM leave no temporary files; analyze writes each of its\n"
            "            files into place in the folder and keeps the folder's other files\n"
            "  storage   a measured fetch already contains its read: [storage] adds only the time\n"
            "            a read loses to sharing the node's bandwidth (batch_mb: trace bytes)\n"
            "  nodes     gpus_per_node = 0: the trace's layout (its GPUs on one node), 8 without\n"
            "  vs_meas   only for the trace's GPUs, batches and epochs; empty otherwise\n"
            "  samples/s the terminal shows batches/s when samples per batch are unknown\n"
            "  dsanalyzer  workers per GPU inferred from the fetch starts ([trace] workers\n"
            "            overrides), prefetch factor 2 unless [trace] prefetch_factor\n"
            "\n"
            "%s\n"
            "\n"
            "INI keys (section, key, default, meaning):\n",
            STALL_LIMITS_TEXT);
    stall_config_help(f);
    fputs(
        "\n"
        "sweeps and capacity planning:\n"
        "  stallsim sweep TRACE|CONFIG.ini [-o DIR] [-j N] [--set S.K=V]... [--sweep S.K=LIST]...\n"
        "                 [--keep iterations] [--max-points N] [--max-point-mb MB] [-q] [--plots]\n"
        "                 [--no-sync]\n"
        "      one run per point of the [sweep] grid (section.key = LIST; LIST: v1, v2 | A..B |\n"
        "      A..B xF | A..B +S; zip = a.b, c.d steps keys together) into DIR/sweep.csv;\n"
        "      resumable; under mpirun the points are split across the ranks\n"
        "  stallsim plan TRACE|CONFIG.ini [-o DIR] [--set S.K=V]... [-q] [--plots] [--no-sync]\n"
        "      mode = model (a replay scenario's trace is the model's input): fewest workers per "
        "GPU for the stall target, the weak-scaling\n"
        "      curve, the storage bandwidth and cores per node needed; [plan] keys (or\n"
        "      --set plan.K=V): stall_target (0.05), efficiency (0.80), max_workers (64),\n"
        "      max_gpus (1024), target_throughput and target_epoch_s (the fewest GPUs for\n"
        "      them, with GPU-hours per epoch), ckpt_stall_budget (the shortest checkpoint\n"
        "      interval within it), max_requests (2e7: the storage-tier requests one run of\n"
        "      the curve may simulate), max_request_nodes (1e9: those requests x nodes, with\n"
        "      the fair store; the GPU-count searches stop short of a run past either and say\n"
        "      so); plan.csv, scaling.csv, effective.ini\n",
        f);
}
