"""The app's private UI package: text catalogue, typed views, figures, widgets, caching, session state.

Streamlit does not treat this folder as pages (the entry page routes with st.navigation).
"""
