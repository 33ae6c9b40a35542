# Two commands for readers (see README.md):
#   make book   build the whole book, executing every chapter
#   make test   run every test: unit tests, strict nbval on every chapter,
#               the book build with warnings as errors, a headless-browser check,
#               and the student edition's no-solutions check
# For instructors:
#   make student  build the student edition (no solutions; committed outputs, not
#                 re-executed) into _build_student/html and _build_student/notebooks
# Helpers for authors:
#   make notebooks           re-execute every chapter in place (commit the outputs)
#   make execute NB=book/x.ipynb     re-execute one chapter in place
#   make chapter NB=book/x.ipynb     build a one-chapter book into _build_chapter/
#   make bench               run the benchmarks (prints ratios)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NOTEBOOKS := $(sort $(wildcard book/*.ipynb))
export PYTHONHASHSEED := 0
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: book test unit nbval build-book check-pages student check-student notebooks execute chapter bench clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . -W --keep-going --all
	@echo "Open $(CURDIR)/_build/html/index.html in a browser."

# unit tests first; then strict nbval and the book build side by side (each executes
# every chapter on one core); then the browser check of the built pages
test: $(STAMP)
	$(MAKE) --no-print-directory unit
	$(MAKE) --no-print-directory -j2 --output-sync=target nbval build-book
	$(MAKE) --no-print-directory -j2 --output-sync=target check-pages check-student

unit: $(STAMP)
	$(BIN)/python -m pytest tests

nbval: $(STAMP)
	$(BIN)/python -m pytest --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg book

build-book: $(STAMP)
	$(BIN)/jupyter-book build . -W --keep-going --all

check-pages: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || { echo "Installing Debian's chromium for the page check"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	$(BIN)/python tests/check_pages.py _build/html

student: $(STAMP)
	$(BIN)/python tools/student_edition.py --out _build_student

check-student: student
	STUDENT_EDITION=_build_student $(BIN)/python -m pytest tests/test_student_edition.py -q

notebooks: $(STAMP)
	for nb in $(NOTEBOOKS); do $(BIN)/jupyter-execute --inplace --timeout=600 $$nb || exit 1; done

execute: $(STAMP)
	$(BIN)/jupyter-execute --inplace --timeout=600 $(NB)

CHAPTER_OUT = _build_chapter/$(notdir $(basename $(NB)))
chapter: $(STAMP)
	rm -rf $(CHAPTER_OUT) && mkdir -p $(CHAPTER_OUT)
	printf 'format: jb-book\nroot: %s\nchapters:\n  - file: book/bibliography\n  - file: book/source_errors\n' "$(basename $(NB))" > $(CHAPTER_OUT)/_toc.yml
	# links to pages outside this one-chapter book cannot resolve here: silence only those (ref.doc)
	$(BIN)/python -c "import yaml; c = yaml.safe_load(open('_config.yml')); c['sphinx']['config'].setdefault('suppress_warnings', []).append('ref.doc'); yaml.safe_dump(c, open('$(CHAPTER_OUT)/_config.yml', 'w'))"
	$(BIN)/jupyter-book build . -W --keep-going --all --toc $(CHAPTER_OUT)/_toc.yml --config $(CHAPTER_OUT)/_config.yml --path-output $(CHAPTER_OUT)
	@echo "Open $(CURDIR)/$(CHAPTER_OUT)/_build/html/$(basename $(NB)).html"

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf _build _build_chapter _build_student .pytest_cache
