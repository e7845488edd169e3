"""A page file run directly as a script: run the entry page instead.

With a pages/ folder beside app.py, a freshly started Streamlit server treats that folder
as old-style pages until st.navigation has run once; a first visit to /masks then runs
pages/masks.py itself. Each page file ends by calling run_entry_page() under
`if __name__ == "__main__"`, so that visit runs app.py, whose st.navigation opens the
same page (the file name is the page's url path) with the sidebar, and nothing says
"page not found".
"""

from __future__ import annotations

import runpy

from transformer.layout import REPO_ROOT


def run_entry_page() -> None:
    runpy.run_path(str(REPO_ROOT / "app.py"), run_name="__main__")
