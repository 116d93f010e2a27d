"""The numbers the DuReader-retrieval (Qiu et al., EMNLP 2022) paper reports, for its spec (``SPEC.reported`` in ``dureader_retrieval.py``).

Read from the paper's tables (values as fractions: the paper's 50.5 % is 0.505); ``source`` gives table, row and
column as the paper labels them. ``tests/test_reported_numbers.py`` finds every one of them in the paper's text.
"""

from ..benchmark import Reported

REPORTED = (
    Reported(system="BM25", measure="RR@10", value=0.2103, dataset="dureader-retrieval/dev",
             source="Table 4, row BM25, column MRR@10",
             note="first-stage retriever; the extraction names no split ('in-domain' in the text): recorded on dev, "
                  "the suite's split"),
    Reported(system="BM25", measure="Success@1", value=0.1208, dataset="dureader-retrieval/dev",
             source="Table 4, row BM25, column Recall@1",
             note="first-stage retriever; the extraction names no split ('in-domain' in the text): recorded on dev, "
                  "the suite's split"),
    Reported(system="BM25", measure="Success@50", value=0.7, dataset="dureader-retrieval/dev",
             source="Table 4, row BM25, column Recall@50",
             note="first-stage retriever; the extraction names no split ('in-domain' in the text): recorded on dev, "
                  "the suite's split"),
    Reported(system="DE w/ BM25 Neg", measure="RR@10", value=0.5396, dataset="dureader-retrieval/dev",
             source="Table 4, row DE w/ BM25 Neg, column MRR@10",
             note="first-stage retriever, RocketQA dual-encoder trained with BM25 hard negatives; the extraction "
                  "names no split ('in-domain' in the text): recorded on dev, the suite's split"),
    Reported(system="DE w/ BM25 Neg", measure="Success@1", value=0.4153, dataset="dureader-retrieval/dev",
             source="Table 4, row DE w/ BM25 Neg, column Recall@1",
             note="first-stage retriever, RocketQA dual-encoder trained with BM25 hard negatives; the extraction "
                  "names no split ('in-domain' in the text): recorded on dev, the suite's split"),
    Reported(system="DE w/ BM25 Neg", measure="Success@50", value=0.9133, dataset="dureader-retrieval/dev",
             source="Table 4, row DE w/ BM25 Neg, column Recall@50",
             note="first-stage retriever, RocketQA dual-encoder trained with BM25 hard negatives; the extraction "
                  "names no split ('in-domain' in the text): recorded on dev, the suite's split"),
    Reported(system="CE w/ BM25 Neg (re-ranking BM25 top 50)", measure="RR@10", value=0.568,
             dataset="dureader-retrieval/dev", source="Table 5, row BM25’s top-50 psg. / CE w/ BM25 Neg, column MRR@10",
             note="RocketQA cross-encoder re-ranking the top 50 of BM25; its Recall@50 is the first stage's; the "
                  "extraction names no split ('in-domain' in the text): recorded on dev, the suite's split"),
    Reported(system="CE w/ BM25 Neg (re-ranking BM25 top 50)", measure="Success@1", value=0.4883,
             dataset="dureader-retrieval/dev",
             source="Table 5, row BM25’s top-50 psg. / CE w/ BM25 Neg, column Recall@1",
             note="RocketQA cross-encoder re-ranking the top 50 of BM25; its Recall@50 is the first stage's; the "
                  "extraction names no split ('in-domain' in the text): recorded on dev, the suite's split"),
    Reported(system="CE w/ BM25 Neg (re-ranking BM25 top 50)", measure="Success@50", value=0.7,
             dataset="dureader-retrieval/dev",
             source="Table 5, row BM25’s top-50 psg. / CE w/ BM25 Neg, column Recall@50",
             note="RocketQA cross-encoder re-ranking the top 50 of BM25; its Recall@50 is the first stage's; the "
                  "extraction names no split ('in-domain' in the text): recorded on dev, the suite's split"),
    Reported(system="CE w/ DE Neg (re-ranking BM25 top 50)", measure="RR@10", value=0.5762,
             dataset="dureader-retrieval/dev", source="Table 5, row BM25’s top-50 psg. / CE w/ DE Neg, column MRR@10",
             note="RocketQA cross-encoder re-ranking the top 50 of BM25; its Recall@50 is the first stage's; the "
                  "extraction names no split ('in-domain' in the text): recorded on dev, the suite's split"),
    Reported(system="CE w/ DE Neg (re-ranking BM25 top 50)", measure="Success@1", value=0.5152,
             dataset="dureader-retrieval/dev", source="Table 5, row BM25’s top-50 psg. / CE w/ DE Neg, column Recall@1",
             note="RocketQA cross-encoder re-ranking the top 50 of BM25; its Recall@50 is the first stage's; the "
                  "extraction names no split ('in-domain' in the text): recorded on dev, the suite's split"),
    Reported(system="CE w/ DE Neg (re-ranking BM25 top 50)", measure="Success@50", value=0.7,
             dataset="dureader-retrieval/dev",
             source="Table 5, row BM25’s top-50 psg. / CE w/ DE Neg, column Recall@50",
             note="RocketQA cross-encoder re-ranking the top 50 of BM25; its Recall@50 is the first stage's; the "
                  "extraction names no split ('in-domain' in the text): recorded on dev, the suite's split"),
    Reported(system="CE w/ DE Neg (re-ranking DE w/ BM25 Neg top 50)", measure="RR@10", value=0.7421,
             dataset="dureader-retrieval/dev", source="Table 5, row DE’s top-50 psg. / CE w/ DE Neg, column MRR@10",
             note="RocketQA cross-encoder re-ranking the top 50 of DE w/ BM25 Neg; its Recall@50 is the first "
                  "stage's; the extraction names no split ('in-domain' in the text): recorded on dev, the suite's "
                  "split"),
    Reported(system="CE w/ DE Neg (re-ranking DE w/ BM25 Neg top 50)", measure="Success@1", value=0.6603,
             dataset="dureader-retrieval/dev", source="Table 5, row DE’s top-50 psg. / CE w/ DE Neg, column Recall@1",
             note="RocketQA cross-encoder re-ranking the top 50 of DE w/ BM25 Neg; its Recall@50 is the first "
                  "stage's; the extraction names no split ('in-domain' in the text): recorded on dev, the suite's "
                  "split"),
    Reported(system="CE w/ DE Neg (re-ranking DE w/ BM25 Neg top 50)", measure="Success@50", value=0.9133,
             dataset="dureader-retrieval/dev", source="Table 5, row DE’s top-50 psg. / CE w/ DE Neg, column Recall@50",
             note="RocketQA cross-encoder re-ranking the top 50 of DE w/ BM25 Neg; its Recall@50 is the first "
                  "stage's; the extraction names no split ('in-domain' in the text): recorded on dev, the suite's "
                  "split"),
)
