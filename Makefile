# Two commands for readers (see README.md):
#   make book   build the HTML of the whole book from the committed, executed notebooks (-W)
#   make test   run every test: unit tests and strict nbval on every chapter (both cores),
#               the book build with warnings as errors, a headless-browser check of every
#               page, and the student edition's no-solutions check; prints each stage's time
# For instructors:
#   make student  build the student edition (no solutions; committed outputs, not
#                 re-executed) into _build_student/html and _build_student/notebooks
#   make nbgrader an nbgrader course, one assignment per problem set, into _build_nbgrader/course;
#                 hidden tests hold cases drawn from the secret (SECRET_FILE=... or DPCP_GRADING_SECRET)
#                 (installs the [course] extra, nbgrader, when it is missing)
# Helpers for authors:
#   make notebooks           re-execute every chapter in place (commit the outputs)
#   make execute NB=book/x.ipynb     re-execute one chapter in place
#   make nbval [NB=book/x.ipynb]     re-execute chapters and compare with the committed outputs
#   make nbval-portable [NB=...]     the same under two OpenBLAS kernels (Haswell, SkylakeX)
#   make chapter NB=book/x.ipynb     build a one-chapter book into _build_chapter/
#   make screenshots [PAGES=06_dpcp] 1280 px and full-page 500 px screenshots of the built book
#   make bench               run the benchmarks (prints ratios)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NOTEBOOKS := $(sort $(wildcard book/*.ipynb))
export PYTHONHASHSEED := 0
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: book test test-stages pytest-all unit nbval nbval-portable build-book check-pages pages student check-student \
        student-check chromium bubblewrap screenshots notebooks execute chapter bench clean nbgrader

# `$(call timed,NAME,COMMAND)` runs COMMAND and appends its wall time to $(STAGES)
STAGES := _build/stage-times.txt
timed = @mkdir -p _build; start=$$(date +%s); $(2); rc=$$?; \
	printf '%-34s %5d s%s\n' '$(1)' $$(( $$(date +%s) - start )) "$$( [ $$rc = 0 ] || echo "  (failed: exit $$rc)")" >> $(STAGES); \
	exit $$rc
NBVAL := --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
JB_BUILD := $(BIN)/jupyter-book build . -W --keep-going --all

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# the HTML from the committed outputs (_config.yml: execute_notebooks "off"); nbval in
# `make test` proves that those outputs are what a fresh top-to-bottom run prints
book: $(STAMP)
	$(JB_BUILD)
	@echo "Open $(CURDIR)/_build/html/index.html in a browser."

# Everything in one `make -j3`, so that both cores stay busy: pytest (unit tests and strict
# nbval on every chapter, two xdist workers) beside the book build and the student edition;
# the page check starts when the build is done, the no-solutions check when the student
# edition is.
test: $(STAMP)
	@mkdir -p _build && rm -f $(STAGES)
	@$(MAKE) --no-print-directory -j3 --output-sync=target test-stages; rc=$$?; \
	  echo; echo "Stage times (wall clock; the stages overlap):"; cat $(STAGES); exit $$rc

test-stages: pytest-all pages student-check

# whole files to the workers in collection order: the longest test files first (LONG_FIRST in
# tests/conftest.py), then the chapters, then the many short test files, which fill the end, so
# that the two workers finish together (xdist's default order, most tests first, left the long
# files with few tests to the end)
# (bubblewrap is checked in the recipe, not as a prerequisite: a phony prerequisite could let the two builds
# take the job slots first, and pytest, the longest stage, would then wait for one of them)
pytest-all: $(STAMP)
	@$(BUBBLEWRAP)
	$(call timed,unit tests + nbval (2 workers),$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder $(NBVAL) book tests)

unit: $(STAMP) bubblewrap
	$(BIN)/python -m pytest -n 2 --dist loadfile -m "not slow" -p no:nbval tests

nbval: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile $(NBVAL) $(or $(NB),book)

# Strict nbval once per OpenBLAS kernel: the committed outputs must not depend on the BLAS kernel
# the CPU selects (kernels sum in different orders). A kernel the CPU cannot run is skipped with
# a message; Haswell needs AVX2, SkylakeX AVX-512.
NBVAL_KERNELS ?= Haswell SkylakeX
nbval-portable: $(STAMP)
	@for k in $(NBVAL_KERNELS); do \
	  case $$k in Haswell) flag=avx2;; SkylakeX|Cooperlake|SapphireRapids) flag=avx512f;; *) flag=;; esac; \
	  if [ -n "$$flag" ] && ! grep -qw "$$flag" /proc/cpuinfo 2>/dev/null; then \
	    echo "== OPENBLAS_CORETYPE=$$k: skipped (this CPU lacks $$flag)"; continue; fi; \
	  echo "== OPENBLAS_CORETYPE=$$k"; \
	  OPENBLAS_CORETYPE=$$k $(BIN)/python -m pytest -n 2 --dist loadfile -q $(NBVAL) $(or $(NB),book) || exit 1; \
	done

build-book: $(STAMP)
	$(call timed,book build (-W; committed outputs),$(JB_BUILD))

pages: build-book chromium
	$(call timed,page check (headless Chromium),$(BIN)/python tests/check_pages.py _build/html)

# the page check alone, on an existing build
check-pages: $(STAMP) chromium
	$(BIN)/python tests/check_pages.py _build/html

# the page check plus 1280 px and full-page 500 px screenshots of the pages (PAGES="06_dpcp ..." for some)
screenshots: $(STAMP) chromium
	$(BIN)/python tests/check_pages.py _build/html --narrow $(PAGES)

chromium:
	@command -v chromium >/dev/null 2>&1 || { echo "Installing Debian's chromium for the page check"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# the batch grader runs every submission in a bubblewrap sandbox and refuses to grade without one; without
# it (no root to install it) the tests that need a sandbox are skipped with a message, while CI (.ci/run)
# requires it
BUBBLEWRAP = command -v bwrap >/dev/null 2>&1 || { echo "Installing Debian's bubblewrap for the batch grader"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; } \
	  || echo "warning: could not install bubblewrap (apt-get needs root): the grader's sandbox tests are skipped"
bubblewrap:
	@$(BUBBLEWRAP)

student: $(STAMP)
	$(call timed,student edition build,$(BIN)/python -m dpcp_tutorial.course.student_edition --out _build_student)

check-student: student-check

student-check: student
	$(call timed,student edition check,STUDENT_EDITION=_build_student $(BIN)/python -m pytest tests/test_student_edition.py -q)

notebooks: $(STAMP)
	for nb in $(NOTEBOOKS); do $(BIN)/jupyter-execute --inplace --timeout=600 $$nb || exit 1; done

execute: $(STAMP)
	$(BIN)/jupyter-execute --inplace --timeout=600 $(NB)

CHAPTER_OUT = _build_chapter/$(notdir $(basename $(NB)))
chapter: $(STAMP)
	rm -rf $(CHAPTER_OUT) && mkdir -p $(CHAPTER_OUT)
	printf 'format: jb-book\nroot: %s\nchapters:\n  - file: book/bibliography\n  - file: book/source_errors\n' "$(basename $(NB))" > $(CHAPTER_OUT)/_toc.yml
	# links to pages outside this one-chapter book cannot resolve here: silence only those
	# (Sphinx's ref.doc and ref.ref, and sphinx-proof's "label not found" for the other chapters'
	# theorems); the full build (make book / make test) still fails on any unresolved reference
	$(BIN)/python -c "import yaml; c = yaml.safe_load(open('_config.yml')); s = c['sphinx']; s['config'].setdefault('suppress_warnings', []).extend(['ref.doc', 'ref.ref']); s['local_extensions'] = {'chapter_build': '$(CURDIR)/tools'}; yaml.safe_dump(c, open('$(CHAPTER_OUT)/_config.yml', 'w'))"
	$(BIN)/jupyter-book build . -W --keep-going --all --toc $(CHAPTER_OUT)/_toc.yml --config $(CHAPTER_OUT)/_config.yml --path-output $(CHAPTER_OUT)
	@echo "Open $(CURDIR)/$(CHAPTER_OUT)/_build/html/$(basename $(NB)).html"

bench: $(STAMP)
	$(BIN)/python -m benchmarks

nbgrader: $(STAMP)
	$(BIN)/python -c "import nbgrader" 2>/dev/null || $(BIN)/python -m pip install --quiet -e ".[course]"
	$(BIN)/python -m dpcp_tutorial.course.make_nbgrader --out _build_nbgrader $(if $(SECRET_FILE),--secret-file $(SECRET_FILE))

clean:
	rm -rf _build _build_chapter _build_student _build_nbgrader .pytest_cache
