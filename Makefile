# Top-level convenience targets. The real build is CMake (CMakeLists.txt).
#   make run    install missing dependencies, build, run the shipped example
#   make test   install missing dependencies, build, run every test
#   make asan   the same tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench  build in Release and run the benchmarks
#   make fuzz   build the libFuzzer targets (clang) and run each FUZZ_SECONDS
#   make figures  regenerate every README figure (docs/img/) from shipped configs and traces
BUILD    ?= build
ASAN     ?= build-asan
EXAMPLE  ?= configs/example.ini
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# The Debian packages `make run`/`make test` install when missing; README.md lists them
# ("Two commands"), and the ctest `readme` checks that it names each one.
PKGS     := libgsl-dev libcsv-dev libinih-dev libyajl-dev zlib1g-dev libcriterion-dev pkg-config cmake gcc make
PKGS     += libopenmpi-dev openmpi-bin
# PyTorch (CPU) for the capture tool's tests (ctest `capture`).
PKGS     += python3-torch

.PHONY: all deps build run test asan bench clean fuzz figures

all: build

deps:
	@sh tools/install-deps.sh $(PKGS)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/stallsim run $(EXAMPLE)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

asan: deps
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DSTALL_SANITIZE=ON -DSTALL_POOL_MALLOC=ON
	cmake --build $(ASAN) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(ASAN) --output-on-failure -j $(JOBS)

bench: build
	@sh bench/run.sh $(BUILD)

FUZZ         ?= build-fuzz
FUZZ_SECONDS ?= 60
fuzz: deps
	@sh tools/install-deps.sh clang libclang-rt-14-dev
	cmake -S . -B $(FUZZ) -DCMAKE_C_COMPILER=clang -DSTALL_FUZZ=ON -DSTALL_TESTS=OFF
	cmake --build $(FUZZ) -j $(JOBS)
	sh tools/fuzz.sh $(FUZZ) $(FUZZ_SECONDS)

# Every figure the README shows, made again from the shipped configs and
# traces by the commands the README quotes (result folders in $(FIGURES)/),
# so that none goes stale: gnuplot-nox is installed when missing.
FIGURES ?= $(BUILD)/figures
STALLSIM = ./$(BUILD)/stallsim
figures: build
	@sh tools/install-deps.sh gnuplot-nox
	rm -rf $(FIGURES)
	mkdir -p $(FIGURES) docs/img
	$(STALLSIM) run configs/w2.ini -o $(FIGURES)/w2-64 -q --set cluster.gpus=64 \
	    --set cluster.gpus_per_node=8 --set run.batches=1000 --set run.epochs=2 \
	    --set fetch.resample=bootstrap --set loader.workers=2 --analyze
	$(STALLSIM) plot $(FIGURES)/w2-64
	cp $(FIGURES)/w2-64/plots/stall_ranks.png docs/img/stall_ranks_64.png
	$(STALLSIM) validate traces/ddp2_straggler -o $(FIGURES)/straggler -q --analyze
	$(STALLSIM) plot $(FIGURES)/straggler
	cp $(FIGURES)/straggler/plots/breakdown.png docs/img/breakdown_straggler.png
	$(STALLSIM) sweep configs/example.ini -o $(FIGURES)/align -q -j $(JOBS)
	$(STALLSIM) plot $(FIGURES)/align
	cp $(FIGURES)/align/plots/sweep.png docs/img/sweep_align.png
	$(STALLSIM) plan configs/w2.ini --set plan.max_gpus=64 -o $(FIGURES)/plan -q
	$(STALLSIM) plot $(FIGURES)/plan
	cp $(FIGURES)/plan/plots/scaling.png docs/img/plan_scaling.png
	@echo "figures in docs/img/: stall_ranks_64.png breakdown_straggler.png sweep_align.png plan_scaling.png"

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ)
