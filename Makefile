# Top-level convenience targets. The real build is CMake (CMakeLists.txt).
#   make run    install missing dependencies, build, run the shipped example
#   make test   install missing dependencies, build, run every test
#   make asan   the same tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench  build in Release and run the benchmarks
#   make fuzz   build the libFuzzer targets (clang) and run each FUZZ_SECONDS
BUILD    ?= build
ASAN     ?= build-asan
EXAMPLE  ?= configs/example.ini
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
PKGS     := libgsl-dev libcsv-dev libinih-dev libyajl-dev zlib1g-dev libcriterion-dev pkg-config cmake gcc make
PKGS     += libopenmpi-dev openmpi-bin

.PHONY: all deps build run test asan bench clean fuzz

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

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ)
