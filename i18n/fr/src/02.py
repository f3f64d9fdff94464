FR = {}
FR["def60143"] = """# Chapitre 2 — Choisir l'environnement d'exécution

**Durée :** environ 30 minutes.

**Prérequis :** le chapitre 1 (les statuts, le tableau des événements, le graphique des compteurs).

**Ce que vous saurez faire**

- pour une tâche donnée, dire qui doit choisir l'étape suivante, et choisir l'environnement
  d'exécution qui laisse ce choix là où il doit être : une simple fonction, un workflow, un agent
  simple ou un harness ;
- exécuter une même revue de ticket dans les quatre environnements, avec les mêmes outils gardés,
  les mêmes limites et les mêmes capacités accordées, et reconnaître, à son tableau d'événements,
  l'environnement qui l'a produite ;
- dire, pour chaque environnement, ce que son modèle peut changer dans une exécution et ce qui reste
  du ressort de l'hôte ;
- montrer la ligne affichée qui distingue le harness de labkit de son agent simple."""
FR["ch2-job"] = """## Une tâche, quatre environnements d'exécution

La tâche est la revue du ticket 42 : le lire, puis en terminer la revue. Chaque exécution ci-dessous
reçoit un `ExecutionScope` neuf, avec ses limites et ses capacités accordées, et les deux outils
gardés que `ReviewTask().tools(scope)` y fabrique. `finish_review` ne réussit qu'après une lecture
réussie du ticket 42, et une exécution n'est `Completed` que si `finish_review` a réussi. D'un environnement
à l'autre, une seule chose change : qui choisit l'étape suivante.

**Une simple fonction.** Le code de l'hôte appelle lui-même les outils, dans l'ordre qu'il a fixé.
Il n'y a pas de modèle."""
FR["ch2-workflow-intro"] = """**Un workflow.** Les étapes sont toujours le code de l'hôte, mais l'une d'elles demande un
jugement : le ticket demande-t-il une modification ? Le workflow pose cette question à un modèle
avec `ask(question, choices)`. La réponse ne compte que si elle est l'un des mots proposés (sinon,
c'est `None`), et chaque issue mène à un chemin que l'hôte a écrit."""
FR["ch2-agents-intro"] = """**L'agent simple et le harness.** Aucun code de l'hôte n'ordonne les étapes : le modèle propose
chaque appel d'outil suivant, et la boucle le fait passer par la garde de l'outil. Ici, le modèle
est un script, une étape par appel modèle :"""
FR["ch2-exp1"] = """## Expérience 1 — la revue dans chaque environnement

Chaque environnement exécute la revue une fois, avec les limites par défaut (6 appels modèle,
4 tentatives d'outil, 1 tentative par appel, 120 s) et les deux capacités accordées ; le modèle du
workflow répond `no`. Prédisez le statut et le nombre d'événements `ToolCall` (une seule prédiction,
vérifiée sur chacune des quatre exécutions), et, pour chaque environnement, le nombre d'événements
`ModelCall`."""
FR["ch2-predict-calls#hint"] = """Comptez qui est sollicité, et pour quoi. Une fonction n'a pas de modèle. Un workflow appelle son modèle une fois pour chaque `ask` qu'il atteint. Un agent appelle son modèle une fois par réponse, et il lui faut une réponse de plus, après le dernier résultat d'outil, pour s'arrêter."""
FR["ch2-read-each"] = """Lisez le tableau colonne par colonne. Les lignes `ModelCall` montrent qui a choisi l'étape
suivante : personne dans la fonction ; dans le workflow, une seule, entre la lecture et la fin de
revue, là où le code de l'hôte a posé sa question ; dans les agents, une avant chaque étape, plus
une troisième dont la réponse ne demandait aucun outil, ce qui a terminé la boucle. Les lignes
`Middleware` appartiennent à la boucle des agents, qui fait passer chaque appel demandé par son
middleware avant la garde ; le code de l'hôte, lui, appelle directement l'outil gardé. Les lignes
`ToolCall` sont les mêmes dans les quatre : la garde a admis `read_ticket`, puis `finish_review`.

## Expérience 2 — une capacité retirée

L'hôte n'accorde plus que `ticket.read` ; `review.finish` n'est pas accordée. Tout le reste est
comme dans l'expérience 1 : le même code hôte, la même réponse `no` pour le workflow, le même script
en trois étapes pour les agents. `guard_events(run)` garde ce que la garde des outils a enregistré
dans une exécution : chaque `ToolCall` admis et un éventuel refus sur un outil, sans les appels
modèle ni le middleware. Prédisez le statut et le nombre de `ToolCall` (vérifiés sur chaque
exécution), et si les événements de garde des quatre exécutions sont identiques."""
FR["ch2-predict-grant#hint"] = """La vérification des permissions s'exécute dans chaque outil, au moment où il est appelé, quel que soit l'appelant. Dans chaque environnement, quel appel vient en premier, et sa capacité est-elle accordée ? Et l'appel suivant ?"""
FR["ch2-read-grant"] = """Dans les quatre exécutions, la lecture a été admise et la fin de revue refusée avant son corps, par
la même règle, au même endroit : la garde de l'outil. Les exécutions, prises en entier, diffèrent
pourtant, et seulement par qui a été sollicité :"""
FR["ch2-exp3"] = """Aucun appel modèle n'a décidé du refus : la fonction, qui n'appelle aucun modèle, a été refusée
tout autant, au même appel. Un environnement d'exécution décide qui propose l'appel suivant, pas si
cet appel peut s'exécuter.

## Expérience 3 — un modèle qui va droit à la fin de revue

Chaque modèle est maintenant remplacé par un modèle qui saute la lecture. Quand on lui pose la
question du workflow, le modèle du workflow répond par un appel d'outil, `finish_review(input=42)`,
au lieu d'un mot. Le modèle des agents demande `finish_review(input=42)` à son premier appel et
répond "Review finished." au second. La simple fonction garde ses propres règles. Les limites et
les capacités accordées sont de nouveau celles par défaut. Prédisez le statut de chaque exécution,
et les outils que la garde y a admis (les noms de ses événements `ToolCall`, dans l'ordre)."""
FR["ch2-predict-skip#hint"] = """Dans le workflow, que renvoie `ask` quand la réponse n'est pas l'un des mots, et quel chemin de `triage` est alors suivi ? Y a-t-il dans un workflow quoi que ce soit qui exécute un appel d'outil demandé par le modèle ? Dans les agents, la garde admet un appel accordé qui reste dans le budget, puis c'est le corps qui décide si la revue peut être terminée."""
FR["ch2-read-skip"] = """Ce que chaque modèle pouvait changer, et ce qu'il ne pouvait pas :

- **Workflow.** Son modèle pouvait choisir l'un des deux mots, rien d'autre. Un appel d'outil n'est
  pas un mot : `ask` a donc renvoyé `None` et `triage` a pris le chemin écrit pour ce cas, il a
  laissé la revue ouverte. Le `finish_review` demandé par le modèle ne s'est jamais exécuté : le
  workflow ne propose aucun outil à son modèle et n'exécute aucun des appels d'une réponse (pas de
  `Middleware`, pas de `ToolCall` pour lui).
- **Agent simple et harness.** Leur modèle a bien choisi l'étape suivante, et l'a mal choisie. La
  garde a admis `finish_review` (capacité accordée, budget respecté), et son corps a refusé de
  terminer un ticket non lu : une erreur que le modèle lit, une tentative comptée. Le modèle a ensuite annoncé
  un succès ; la condition hôte est fausse, donc l'exécution est `Incomplete`, son texte est retenu
  et ce n'est pas un succès.
- **Fonction.** Pas de modèle à induire en erreur, mais pas de jugement non plus : elle terminerait
  tout aussi bien un ticket qui demande une modification.

Les issues côte à côte :"""
FR["950ce359"] = """## Ce que le harness active, et désactive

Dans les trois expériences, l'agent simple et le harness ont enregistré les mêmes événements. Ce qui
les distingue est affiché. `labkit.prepare` construit une exécution d'un scénario, et son en-tête
liste l'agent, la composition du harness, les capacités accordées, les limites et la condition de
fin. Construisez la même exécution (le scénario `complete` de la leçon) pour les deux agents et ne
gardez que les lignes d'en-tête qui diffèrent :"""
FR["ef094416"] = """C'est toute la différence. La ligne de l'agent en nomme le type ; la ligne des capacités liste
chaque capacité optionnelle, toutes à `off` sauf la télémétrie, et dit ce que `on` signifie : les
événements de contrôle (enregistrés par le périmètre d'exécution, de la même façon pour les deux
agents), plus des spans OpenTelemetry de l'exécution du harness dès qu'un *tracer provider* est
configuré (le chapitre 8 les montre). Rien ne se déduit du mot « harness » : si une capacité n'est pas affichée
à `on`, elle n'est pas là. labkit refuse de faire semblant :"""
FR["ch2-self-check-title"] = """## Auto-vérification"""
FR["9dfb3247"] = """## Explorer

Choisissez un scénario, passez de l'agent simple au harness, déplacez les limites et relancez.
Pour quels scénarios et quelles limites les deux agents se terminent-ils différemment, si cela
arrive ? (Le panneau sert à explorer ; rien de ce qu'il contient n'est enregistré avec le
notebook.)"""
FR["questions"] = """## Questions

**1.** Lequel des quatre environnements d'exécution choisiriez-vous pour orienter un ticket d'après
son seul champ de priorité ? Pourquoi pas un agent ?

<details><summary>Réponse</summary>

Une simple fonction : un champ et quelques règles fixes suffisent à décider. Un modèle ajouterait
un coût, de la latence et un risque de mauvaise orientation, et l'hôte devrait de toute façon
vérifier sa réponse ; il ne reste aucun choix à confier à un modèle.

</details>

**2.** Dans l'expérience 3, le modèle du workflow a demandé `finish_review` et rien ne s'est
exécuté. Citez deux éléments de `triage` et de `run_workflow` qui l'ont garanti.

<details><summary>Réponse</summary>

`ask` ne propose aucun outil au modèle et réduit la réponse à l'un des mots proposés ou à `None` ;
aucun code du workflow n'exécute un appel d'outil trouvé dans une réponse. Et `triage` n'appelle
`finish_review` que sur le chemin de `"no"` : chaque étape qui peut s'exécuter est écrite dans le
code de l'hôte, si bien que le modèle peut choisir entre ces chemins, mais n'en ajouter aucun.

</details>

**3.** Dans l'expérience 3, le modèle d'un agent a mal choisi l'étape suivante, et pourtant
l'exécution n'a pas été marquée comme terminée. Quelles sont les deux parties de l'hôte qui l'ont
empêchée de compter comme une revue terminée ?

<details><summary>Réponse</summary>

Le corps de l'outil lui-même, qui refuse de terminer un ticket qui n'a pas été lu (la garde a admis
l'appel, le corps a échoué, et la tentative a tout de même été comptée), et la condition hôte, lue
après la boucle : `finish_review` n'a jamais réussi, donc l'hôte ne compte pas la revue comme
faite, quoi qu'ait dit le modèle (le chapitre 3 donne son nom à cette fin).

</details>

**4.** Si le harness de labkit proposait la recherche web et que vous l'activiez, quelle ligne de
l'en-tête changerait, et quels contrôles arrêteraient toujours une boucle qui s'emballe ?

<details><summary>Réponse</summary>

La ligne `harness capabilities:` afficherait `web_search=on`. Les bornes, elles, ne changeraient
pas : les limites du périmètre d'exécution (appels modèle, tentatives d'outil, tentatives par
appel, délai) et la vérification des permissions par la garde arrêtent toujours l'exécution. Un
harness ajoute des capacités ; il ne remplace pas le contrôle métier. (Aujourd'hui, labkit refuse purement et
simplement `web_search=True`, comme le montre l'erreur ci-dessus.)

</details>

**5.** Pourquoi le `max_iterations` de la boucle vaut-il 7 alors que la limite d'appels modèle est
de 6 (voir la ligne `agent:` ci-dessus) ?

<details><summary>Réponse</summary>

Pour que le compteur de l'hôte arrête toujours la boucle en premier, avec un statut nommé
(`ModelBudget`). Si le plafond propre à la boucle était de 6 ou moins, un modèle qui s'emballe
terminerait la boucle en silence, à court d'itérations, et aucune règle de l'hôte n'aurait décidé
de l'arrêt.

</details>"""
FR["ch2-key-points"] = """## Points clés

- Choisissez l'environnement d'exécution d'après la tâche : une fonction pour des règles fixes, un
  workflow quand les étapes sont connues et que l'une d'elles demande un jugement, un agent quand un
  modèle doit choisir l'outil suivant, un harness quand vous composez délibérément davantage autour
  de cette boucle.
- Passer de la fonction à l'agent, c'est faire passer le choix de l'étape suivante du code de
  l'hôte au modèle : aucun appel modèle, un par question, un par réponse.
- Le modèle d'un workflow choisit parmi les chemins déclarés par l'hôte ; il ne peut ni ajouter une
  étape ni exécuter un outil. Le modèle d'un agent propose n'importe quel appel de n'importe quel
  outil visible, avec n'importe quels arguments.
- Dans les quatre cas, ce sont les mêmes outils gardés qui décident si un appel peut s'exécuter, et
  la condition hôte qui décide si le travail est fait ; la garde enregistre les mêmes événements,
  quel que soit l'appelant.
- Le harness de labkit ne diffère de l'agent simple que par la liste de capacités qu'il affiche ;
  demander une capacité qu'il ne fournit pas lève une erreur.

**Pour aller plus loin**

- Écrivez votre propre workflow, dont le `ask` propose trois mots, et donnez à son modèle une
  réponse qui n'est aucun d'eux : quel chemin votre code prend-il, et qu'a vu la garde ?
- Dans un terminal, `labkit run complete` et `labkit run complete --simple` : comparez les deux
  en-têtes.
- Ensuite : le chapitre 3 suit un cycle complet de la boucle de l'agent, événement par événement."""
FR["instructor"] = """## Notes pour l'enseignant

<details><summary>Idées reçues fréquentes et pistes de discussion</summary>

**Idées reçues fréquentes**

- « Un agent, c'est toujours le choix moderne. » La plupart des tâches d'orientation et de
  validation relèvent d'une fonction ou d'un workflow ; ne choisissez un agent que lorsqu'un modèle
  doit choisir l'outil suivant. L'expérience 1 montre ce que cela coûte en appels modèle,
  l'expérience 3 ce que produit un mauvais choix du modèle.
- « Un workflow qui appelle un modèle est un agent. » Le modèle du workflow répond à une question ;
  le code de l'hôte garde la main sur les étapes. L'expérience 3 montre un appel d'outil venant de
  ce modèle purement et simplement ignoré.
- « Le code de l'hôte n'a pas besoin de la garde : il est de confiance. » La garde est sur l'outil,
  donc la fonction est bornée comme un agent (expérience 2). On garde ainsi une seule politique pour
  tous les appelants.
- « Un harness est plus sûr ou plus intelligent qu'un agent simple. » Le harness de labkit change ce
  qui est composé autour de la boucle, pas le contrôle de l'hôte ; le même script donne les mêmes
  événements dans les deux.
- « Télémétrie à `on` veut dire que le harness enregistre plus d'événements de contrôle. » Les
  événements de contrôle viennent du périmètre d'exécution, que les deux agents partagent. Ce que
  `telemetry=on` ajoute, ce sont des spans OpenTelemetry de l'exécution du harness, dès qu'un *tracer provider* est
  configuré (chapitre 8).

**Pistes de discussion**

- Réécrivez `triage` pour qu'un `"yes"` mène aussi à `finish_review`. Qu'avez-vous dû écrire, et son
  modèle aurait-il pu faire ce changement de lui-même ?
- Listez les capacités que votre framework d'agents préféré active par défaut. Lesquelles sont
  affichées quelque part ? Lesquelles voudriez-vous désactiver pour une revue de ticket ?
- Quand feriez-vous passer une tâche d'un workflow à un agent, et quelles bornes ajouteriez-vous en
  premier ?

Dans un terminal, `labkit run complete` et `labkit run complete --simple` affichent les deux
en-têtes comparés plus haut.

</details>"""
