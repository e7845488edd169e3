"""The entry page's pages and their navigation; a page file run as a script runs the entry page.

Streamlit treats a pages/ folder beside app.py as old-style pages until st.navigation has run
once in the server: a freshly started server lists the module names of pages/ and, for a first
visit to /masks, runs pages/masks.py itself. So

- .streamlit/config.toml sets client.showSidebarNavigation = false: no list of module names is
  ever drawn, and the sidebar's links below, titled from the catalogue, are the navigation
  from the first paint on;
- each page file ends by calling run_entry_page() under `if __name__ == "__main__"`: such a
  visit runs app.py, whose st.navigation opens the same page (the file name is the url path);
- the explorer is the default page (at "/") and is also at /explorer, a hidden page of its
  own: a default page's url path is "", so /explorer would otherwise say "page not found".

The page modules are imported when their page first runs, not at start: a cold start imports
only what its first page needs.
"""

from __future__ import annotations

import importlib
import runpy
from collections.abc import Callable

import streamlit as st

from transformer.layout import REPO_ROOT

from .i18n import Translator
from .lru import CacheWaitTimeout

# section key -> (module of pages/, title key, icon); the first page is the default one.
SECTIONS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "nav.explore": (
        ("explorer", "nav.explorer", ":material/grid_view:"),
        ("headlab", "nav.headlab", ":material/science:"),
    ),
    "nav.learn": (
        ("masks", "nav.masks", ":material/visibility_off:"),
        ("positions", "nav.positions", ":material/waves:"),
        ("arithmetic", "nav.steps", ":material/calculate:"),
        ("multihead", "nav.multihead", ":material/view_column:"),
        ("variants", "nav.variants", ":material/compare_arrows:"),
    ),
    "nav.train": (("training", "nav.training", ":material/model_training:"),),
}
DEFAULT = SECTIONS["nav.explore"][0][0]


def _runner(module: str, tr: Translator) -> Callable[[], None]:
    def run() -> None:
        try:
            importlib.import_module(f"pages.{module}").page()
        except CacheWaitTimeout as exc:  # a bounded wait on another session's computation ran out
            st.warning(tr("cache.wait_timeout", seconds=exc.waited_s), icon=":material/hourglass_top:")
        except TimeoutError:
            st.warning(tr("cache.timeout"), icon=":material/hourglass_top:")

    run.__name__ = module
    return run


class Navigation:
    """Every page as an st.Page (by module name), the sidebar's links, and the page this run opens."""

    def __init__(self, tr: Translator) -> None:
        self.tr = tr
        self.pages: dict[str, st.Page] = {}
        for entries in SECTIONS.values():
            for module, title, icon in entries:
                default = module == DEFAULT
                self.pages[module] = st.Page(
                    _runner(module, tr), title=tr(title), icon=icon, url_path="" if default else module, default=default
                )
        _, title, icon = SECTIONS["nav.explore"][0]
        self.alias = st.Page(_runner(DEFAULT, tr), title=tr(title), icon=icon, url_path=DEFAULT, visibility="hidden")
        sections = {tr(key): [self.pages[module] for module, _, _ in entries] for key, entries in SECTIONS.items()}
        sections[tr("nav.explore")].append(self.alias)
        # hidden: no list of module names on a fresh server's first run either (config.toml)
        self.current = st.navigation(sections, position="hidden")

    @property
    def module(self) -> str:
        """The module of pages/ this run opens (the explorer at "/" and at /explorer)."""
        return self.current.url_path or DEFAULT

    def sidebar(self) -> None:
        """The navigation, at the top of the sidebar: a caption per section, a link per page."""
        with st.sidebar, st.container(key="navigation"):
            for key, entries in SECTIONS.items():
                st.caption(self.tr(key))
                for module, title, icon in entries:
                    page = self.pages[module]
                    if module == DEFAULT and self.current is self.alias:
                        page = self.alias  # the link of the page shown is the highlighted one
                    st.page_link(page, label=self.tr(title), icon=icon, width="stretch")
            st.divider()


def run_entry_page() -> None:
    runpy.run_path(str(REPO_ROOT / "app.py"), run_name="__main__")
